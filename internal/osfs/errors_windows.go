package osfs

import (
	"errors"

	"golang.org/x/sys/windows"
)

// IsNotEmpty reports whether err is the failure to remove a directory
// that is not empty.
func IsNotEmpty(err error) bool { return errors.Is(err, windows.ERROR_DIR_NOT_EMPTY) }

// IsSymlinkNotPermitted reports whether err is the failure to make a
// symbolic link because the user may not: without Developer Mode or the
// SeCreateSymbolicLinkPrivilege, Windows refuses it.
func IsSymlinkNotPermitted(err error) bool { return errors.Is(err, windows.ERROR_PRIVILEGE_NOT_HELD) }
