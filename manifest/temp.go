package manifest

import (
	"crypto/rand"
	"encoding/hex"
	"path"
)

// TempPattern matches (as path.Match) the names of the temporary files a
// restore writes beside their targets before renaming them into place. A
// scan never captures a file of this name, so one that a killed restore
// left is never taken for project data.
const TempPattern = ".casckpt-*.tmp"

// TempName returns a fresh random hidden name matching TempPattern:
// ".casckpt-" and 16 hexadecimal digits, then ".tmp".
func TempName() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return ".casckpt-" + hex.EncodeToString(b[:]) + ".tmp"
}

// IsTemp reports whether name (a base name) matches TempPattern.
func IsTemp(name string) bool {
	ok, _ := path.Match(TempPattern, name)
	return ok
}
