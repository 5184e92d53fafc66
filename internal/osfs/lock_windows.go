package osfs

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// allBytes is the length of the locked range: from offset 0, every byte a
// file can have (as cmd/go's file locks do). Windows locks are mandatory
// for the range they cover, for other handles; a lock file is never read
// and a temporary file is written through the handle that holds the lock.
const allBytes = ^uint32(0)

// Lock takes a lock on all of f, exclusive or shared, waiting until no
// other handle holds a conflicting one (LockFileEx). Closing f releases
// the lock, and so does the death of the process that holds it; it also
// excludes other handles of the same process.
func Lock(f *os.File, exclusive bool) error {
	_, err := lockFileEx(f, exclusive, false)
	return err
}

// TryLock is Lock without the wait: ok is false, with no error, when
// another handle holds a conflicting lock.
func TryLock(f *os.File, exclusive bool) (ok bool, err error) {
	return lockFileEx(f, exclusive, true)
}

func lockFileEx(f *os.File, exclusive, nowait bool) (bool, error) {
	var flags uint32
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	if nowait {
		flags |= windows.LOCKFILE_FAIL_IMMEDIATELY
	}
	c, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	cerr := c.Control(func(h uintptr) {
		err = windows.LockFileEx(windows.Handle(h), flags, 0, allBytes, allBytes, new(windows.Overlapped))
	})
	switch {
	case cerr != nil:
		return false, cerr
	case nowait && errors.Is(err, windows.ERROR_LOCK_VIOLATION):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}
