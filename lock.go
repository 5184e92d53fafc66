package casckpt

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/casckpt/casckpt/internal/osfs"
)

// storeLock is a held lock (osfs.TryLock) on the store's lock file.
type storeLock struct{ f *os.File }

// lockStore takes the store lock, shared or exclusive, waiting until
// deadline. Its locks (flock; LockFileEx on Windows) belong to the open file, so they also exclude other
// goroutines of this process, and the kernel drops them when a process
// dies. A lock on a file that is no longer the one at path (clear deleted
// the store meanwhile) is released and errLockReplaced returned: the caller
// makes the store again and retries.
func lockStore(ctx context.Context, path string, exclusive bool, deadline time.Time, timeout time.Duration) (*storeLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	wait := time.Millisecond
	for {
		ok, err := osfs.TryLock(f, exclusive)
		if ok {
			if !sameFile(f, path) {
				f.Close()
				return nil, errLockReplaced
			}
			return &storeLock{f: f}, nil
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if lockWaitHook != nil && wait == time.Millisecond {
			lockWaitHook(path)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("%w: another casckpt process held %s for %s; try again when it finishes", ErrBusy, path, timeout)
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

// lockWaitHook, when set by a test, is called by lockStore with the lock
// file's path when it first finds the lock held, before it waits.
var lockWaitHook func(path string)

// sameFile reports whether the open file f is the file now at path (same
// device and inode; volume and file index on Windows).
func sameFile(f *os.File, path string) bool {
	held, err := f.Stat()
	if err != nil {
		return false
	}
	current, err := os.Stat(path)
	return err == nil && os.SameFile(held, current)
}

func (l *storeLock) unlock() {
	if l != nil {
		l.f.Close() // closing the last descriptor releases the lock
	}
}

// lockProject takes the project's writer lock, which restores and undos
// of project workdir hold while they scan, plan and change its tree, so
// that they run one at a time and each plans from what the one before
// left. It waits as the store lock does, and returns its release. The
// lock file is in the store's locks directory (cleared with the store,
// which no one clears while this hold has the store lock, which a
// hold that writes always has).
func (ss *hold) lockProject(ctx context.Context, workdir string) (func(), error) {
	dir := filepath.Join(ss.s.dir, "locks")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("project lock: %w", err)
	}
	sum := sha256.Sum256([]byte(workdir))
	name := filepath.Join(dir, "project-"+hex.EncodeToString(sum[:12]))
	deadline := time.Now().Add(ss.s.opts.LockTimeout)
	for {
		l, err := lockStore(ctx, name, true, deadline, ss.s.opts.LockTimeout)
		if errors.Is(err, errLockReplaced) {
			continue
		}
		if errors.Is(err, ErrBusy) {
			err = fmt.Errorf("%w: another restore or undo of %s held it for %s; try again when it finishes", ErrBusy, workdir, ss.s.opts.LockTimeout)
		}
		if err != nil {
			return nil, err
		}
		return l.unlock, nil
	}
}
