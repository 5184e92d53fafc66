//go:build unix

package osfs

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// FromUnix converts a stat(2) result.
func FromUnix(st *unix.Stat_t) Stat {
	return Stat{
		Mode: uint32(st.Mode), Size: st.Size,
		Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(),
		Dev: uint64(st.Dev), Ino: st.Ino, // Dev is int32 on some systems
		Nlink: uint64(st.Nlink), Blocks: st.Blocks,
	}
}

// FromInfo returns the metadata that fi (from os.Lstat, os.Stat or a
// File's Stat) holds; ok is false for a FileInfo that holds none.
func FromInfo(fi fs.FileInfo) (Stat, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Stat{}, false
	}
	mtime, ctime := sysTimes(st)
	return Stat{
		Mode: uint32(st.Mode), Size: st.Size,
		Mtime: mtime, Ctime: ctime,
		Dev: uint64(st.Dev), Ino: st.Ino,
		Nlink: uint64(st.Nlink), Blocks: st.Blocks,
	}, true
}

// FileStat returns the metadata of the open file f (fstat).
func FileStat(f *os.File) (Stat, error) {
	c, err := f.SyscallConn()
	if err != nil {
		return Stat{}, err
	}
	var st unix.Stat_t
	cerr := c.Control(func(fd uintptr) { err = unix.Fstat(int(fd), &st) })
	if cerr != nil {
		return Stat{}, cerr
	}
	if err != nil {
		return Stat{}, &os.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	return FromUnix(&st), nil
}
