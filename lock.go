package casckpt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// ErrBusy is returned when the store's lock could not be taken in time.
var ErrBusy = errors.New("store is busy")

// storeLock is a held flock on the store's lock file.
type storeLock struct{ f *os.File }

// lockStore takes the store lock, shared or exclusive, waiting up to timeout.
// flock locks belong to the open file, so they also exclude other goroutines
// of this process, and the kernel drops them when a process dies.
func lockStore(ctx context.Context, path string, exclusive bool, timeout time.Duration) (*storeLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	deadline := time.Now().Add(timeout)
	wait := time.Millisecond
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if err == nil {
			return &storeLock{f: f}, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
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

func (l *storeLock) unlock() {
	if l != nil {
		l.f.Close() // closing the last descriptor releases the flock
	}
}
