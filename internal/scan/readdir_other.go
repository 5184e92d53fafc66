//go:build !linux

package scan

import (
	"os"
	"slices"
	"strings"
)

// listFile lists the directory open as f, sorted by name, through
// os.File.ReadDir: only Linux has the faster listing of readdir_linux.go.
func listFile(f *os.File) ([]dirEntry, error) {
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	entries := make([]dirEntry, len(des))
	for i, de := range des {
		entries[i] = dirEntry{name: de.Name(), dir: de.IsDir()}
	}
	slices.SortFunc(entries, func(a, b dirEntry) int { return strings.Compare(a.name, b.name) })
	return entries, nil
}
