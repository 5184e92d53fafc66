package osfs

import (
	"os"

	"golang.org/x/sys/windows"
)

// FileID returns the volume serial number and the file index of the open
// file f: Windows' device and inode.
func FileID(f *os.File) (dev, ino uint64, err error) {
	c, err := f.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var info windows.ByHandleFileInformation
	cerr := c.Control(func(h uintptr) { err = windows.GetFileInformationByHandle(windows.Handle(h), &info) })
	if cerr != nil {
		return 0, 0, cerr
	}
	if err != nil {
		return 0, 0, &os.PathError{Op: "GetFileInformationByHandle", Path: f.Name(), Err: err}
	}
	return uint64(info.VolumeSerialNumber), uint64(info.FileIndexHigh)<<32 | uint64(info.FileIndexLow), nil
}

// DirID returns the volume serial number and file index of the directory
// at p, following links; ok is false when p is not a directory that can be
// opened (a FileInfo carries no file index on Windows).
func DirID(p string) (dev, ino uint64, ok bool) {
	f, err := os.Open(p)
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.IsDir() {
		return 0, 0, false
	}
	dev, ino, err = FileID(f)
	return dev, ino, err == nil
}
