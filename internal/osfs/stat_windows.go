package osfs

import (
	"io/fs"
	"os"
)

// FromInfo returns the metadata that fi (from os.Lstat, os.Stat or a
// File's Stat) holds: Windows keeps no inode change time, and a FileInfo
// carries no file index, so Ctime, Dev and Ino are 0 (FileID reads the
// index from an open file). ok is false for a nil fi.
func FromInfo(fi fs.FileInfo) (Stat, bool) {
	if fi == nil {
		return Stat{}, false
	}
	return Stat{Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Nlink: 1, Mode: windowsMode(fi.Mode())}, true
}

// FileStat returns the metadata of the open file f, as FromInfo of its
// Stat: the same fields a later Lstat of its path gives, so that stamps
// made from either compare equal.
func FileStat(f *os.File) (Stat, error) {
	fi, err := f.Stat()
	if err != nil {
		return Stat{}, err
	}
	st, _ := FromInfo(fi)
	return st, nil
}
