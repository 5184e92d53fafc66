//go:build unix

package osfs

import (
	"errors"

	"golang.org/x/sys/unix"
)

// IsNotEmpty reports whether err is the failure to remove a directory
// that is not empty.
func IsNotEmpty(err error) bool { return errors.Is(err, unix.ENOTEMPTY) }
