//go:build unix

package osfs

import "os"

// Unlinked reports whether the open file f has no name left: another
// process removed it after it was opened.
func Unlinked(f *os.File) (bool, error) {
	st, err := FileStat(f)
	return st.Nlink == 0, err
}
