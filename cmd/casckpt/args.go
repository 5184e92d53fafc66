package main

import (
	"os"

	"github.com/casckpt/casckpt"
)

// isRef reports whether s has the shape of a snapshot reference (hex digits
// or @N) and is not an existing directory, which the user more likely meant.
func isRef(s string) bool {
	if casckpt.Ref(s).Validate() != nil {
		return false
	}
	st, err := os.Stat(s)
	return err != nil || !st.IsDir()
}

// splitDir takes the optional leading DIR off args, of which at least min
// must remain: the first argument is DIR when more than min were given and
// it is not a reference.
func splitDir(args []string, min int) (dir string, rest []string) {
	if len(args) > min && !isRef(args[0]) {
		return args[0], args[1:]
	}
	return ".", args
}
