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
	m := fi.Mode()
	st := Stat{Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Nlink: 1, Mode: uint32(m.Perm() &^ 0o111)}
	switch {
	case m&fs.ModeSymlink != 0:
		st.Mode |= TypeSymlink
	case m.IsDir():
		st.Mode |= TypeDir
	case m.IsRegular():
		st.Mode |= TypeRegular
	default:
		st.Mode = 0o010000 // a named pipe or device: never captured
	}
	return st, true
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
