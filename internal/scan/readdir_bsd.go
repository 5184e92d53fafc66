//go:build unix && !linux

package scan

import (
	"os"

	"golang.org/x/sys/unix"
)

// readDir lists the directory open as fd, without . and .., sorted by
// name, through a duplicate of fd (closing an os.File closes its
// descriptor).
func readDir(fd int) ([]dirEntry, error) {
	dup, err := unix.Dup(fd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), ".")
	defer f.Close()
	return listFile(f)
}
