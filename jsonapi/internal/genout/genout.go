// Package genout is the main of the jsonapi generators that write one
// file (pyfields, tstypes): it takes -o FILE (default stdout), writes
// what the generator made, and exits 1 with the error on stderr.
package genout

import (
	"flag"
	"fmt"
	"os"
)

// Main parses -o, calls generate and writes its bytes to the file -o
// names, or to stdout; on an error it prints "name: error" and exits 1.
func Main(name string, generate func() ([]byte, error)) {
	out := flag.String("o", "", "the file to write (default: stdout)")
	flag.Parse()
	b, err := generate()
	if err == nil && *out != "" {
		err = os.WriteFile(*out, b, 0o644)
	} else if err == nil {
		_, err = os.Stdout.Write(b)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}
