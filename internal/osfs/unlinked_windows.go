package osfs

import (
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// fileStandardInfo is FILE_STANDARD_INFO, which x/sys/windows does not
// declare.
type fileStandardInfo struct {
	AllocationSize, EndOfFile int64
	NumberOfLinks             uint32
	DeletePending, Directory  bool
}

// Unlinked reports whether the open file f has no name left, or is to
// lose it when its last handle closes: another process removed it after
// it was opened.
func Unlinked(f *os.File) (bool, error) {
	c, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var info fileStandardInfo
	cerr := c.Control(func(h uintptr) {
		err = windows.GetFileInformationByHandleEx(windows.Handle(h), windows.FileStandardInfo, (*byte)(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
	})
	if cerr != nil {
		return false, cerr
	}
	if err != nil {
		return false, &os.PathError{Op: "GetFileInformationByHandleEx", Path: f.Name(), Err: err}
	}
	return info.NumberOfLinks == 0 || info.DeletePending, nil
}
