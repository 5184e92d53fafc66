package repo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/osfs"
)

// ErrLockReplaced is LockFile's error when the file it locked is no
// longer the one at its path (clear deleted the store meanwhile): the
// caller makes the store again and retries.
var ErrLockReplaced = errors.New("the store's lock file was replaced while waiting for it")

// Lock is a held lock (osfs.TryLock) on a lock file.
type Lock struct {
	f    *os.File
	path string
}

// LockFile takes the lock on the file at path, shared or exclusive,
// waiting until deadline; timeout is how long that was, for the error.
// Its locks (flock; LockFileEx on Windows) belong to the open file, so
// they also exclude other goroutines of this process, and the kernel
// drops them when a process dies. A lock on a file that is no longer the
// one at path is released and ErrLockReplaced returned. A lock still held
// at the deadline yields index.ErrBusy.
func LockFile(ctx context.Context, path string, exclusive bool, deadline time.Time, timeout time.Duration) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	wait := time.Millisecond
	for {
		ok, err := osfs.TryLock(f, exclusive)
		if ok {
			l := &Lock{f: f, path: path}
			if !l.Current() {
				f.Close()
				return nil, ErrLockReplaced
			}
			return l, nil
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if LockWaitHook != nil && wait == time.Millisecond {
			LockWaitHook(path)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("%w: another casckpt process held %s for %s; try again when it finishes", index.ErrBusy, path, timeout)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// LockWaitHook, when set by a test, is called by LockFile with the lock
// file's path when it first finds the lock held, before it waits.
var LockWaitHook func(path string)

// Current reports whether the locked file is the file now at its path
// (same device and inode; volume and file index on Windows).
func (l *Lock) Current() bool {
	held, err := l.f.Stat()
	if err != nil {
		return false
	}
	current, err := os.Stat(l.path)
	return err == nil && os.SameFile(held, current)
}

// Unlock releases the lock; a nil Lock holds nothing.
func (l *Lock) Unlock() {
	if l != nil {
		l.f.Close() // closing the last descriptor releases the lock
	}
}
