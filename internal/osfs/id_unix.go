//go:build unix

package osfs

import "os"

// FileID returns the device and inode of the open file f.
func FileID(f *os.File) (dev, ino uint64, err error) {
	st, err := FileStat(f)
	return st.Dev, st.Ino, err
}

// DirID returns the device and inode of the directory at p, following
// links; ok is false when p is not a directory that can be stat'ed.
func DirID(p string) (dev, ino uint64, ok bool) {
	fi, err := os.Stat(p)
	if err != nil || !fi.IsDir() {
		return 0, 0, false
	}
	st, ok := FromInfo(fi)
	return st.Dev, st.Ino, ok
}
