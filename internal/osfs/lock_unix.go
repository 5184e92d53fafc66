//go:build unix

package osfs

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// Lock takes an advisory lock on all of f, exclusive or shared, waiting
// until no other open file holds a conflicting one (flock). The lock
// belongs to the open file: closing it releases the lock, and so does the
// death of the process that holds it; it also excludes other open files
// of the same process.
func Lock(f *os.File, exclusive bool) error {
	_, err := flock(f, exclusive, false)
	return err
}

// TryLock is Lock without the wait: ok is false, with no error, when
// another open file holds a conflicting lock.
func TryLock(f *os.File, exclusive bool) (ok bool, err error) {
	return flock(f, exclusive, true)
}

func flock(f *os.File, exclusive, nowait bool) (bool, error) {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	if nowait {
		how |= unix.LOCK_NB
	}
	c, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	cerr := c.Control(func(fd uintptr) {
		for {
			if err = unix.Flock(int(fd), how); !errors.Is(err, unix.EINTR) {
				return
			}
		}
	})
	switch {
	case cerr != nil:
		return false, cerr
	case nowait && errors.Is(err, unix.EWOULDBLOCK):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}
