package osfs

import (
	"errors"
	"syscall"

	"golang.org/x/sys/windows"
)

// IsNotEmpty reports whether err is the failure to remove a directory
// that is not empty: Windows' error, or the ENOTEMPTY that Go defines on
// Windows too (a fake file system returns it).
func IsNotEmpty(err error) bool {
	return errors.Is(err, windows.ERROR_DIR_NOT_EMPTY) || errors.Is(err, syscall.ENOTEMPTY)
}
