package casckpt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/repo"
)

func TestBusyStoreGivesUpWithAClearMessage(t *testing.T) {
	ctx := context.Background()
	s, dir, held := lockedStore(t, 200*time.Millisecond) // as gc holds it
	start := time.Now()
	_, err := s.Snapshot(ctx, dir, SnapshotOptions{})
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "try again") || time.Since(start) > 2*time.Second {
		t.Fatalf("snapshot beside a held exclusive lock: %v after %v", err, time.Since(start))
	}
	// The holder goes away (a process that dies drops its flock the same
	// way): the next caller proceeds at once.
	held.Unlock()
	if _, err := s.Snapshot(ctx, dir, SnapshotOptions{}); err != nil {
		t.Fatalf("after the holder went away: %v", err)
	}
}

// TestLockWaiterFollowsAClearedStore: a process waiting on the lock while
// clear deletes the store must not go on holding the deleted lock file,
// where a gc taking the new lock would not see it.
func TestLockWaiterFollowsAClearedStore(t *testing.T) {
	ctx := context.Background()
	s, _, held := lockedStore(t, time.Minute) // as clear holds it
	got := make(chan *hold)
	go func() {
		ss, err := s.begin(ctx, false, true) // a snapshot waiting its turn
		if err != nil {
			t.Error(err)
		}
		got <- ss
	}()
	// Wait until the waiter has opened the old lock file: its flock
	// attempts fail while the exclusive lock is held.
	for !lockFileOpenedElsewhere(t, s.repo.LockPath()) {
		time.Sleep(time.Millisecond)
	}
	// clear: delete everything, the lock file last, then let go.
	if err := os.RemoveAll(s.Location()); err != nil {
		t.Fatal(err)
	}
	held.Unlock()
	ss := <-got
	if ss == nil {
		t.FailNow()
	}
	defer ss.End()
	if !ss.Lock().Current() {
		t.Fatal("the waiter holds the deleted lock file, not the one at the lock path")
	}
	if _, err := repo.LockFile(ctx, s.repo.LockPath(), true, time.Now(), 0); !errors.Is(err, ErrBusy) {
		t.Fatalf("a gc could take the exclusive lock beside the waiter's: %v", err)
	}
	if _, err := os.Stat(s.repo.PacksDir()); err != nil {
		t.Fatalf("the waiter did not make the store again: %v", err)
	}
}

// lockFileOpenedElsewhere reports whether some descriptor of this process
// besides the holder's refers to the file at path (two or more do).
func lockFileOpenedElsewhere(t *testing.T, path string) bool {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	opened := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && target == path {
			opened++
		}
	}
	return opened > 1
}

// lockedStore returns a store with one snapshot of dir, and its lock held
// exclusively.
func lockedStore(t *testing.T, timeout time.Duration) (*Store, string, *repo.Lock) {
	t.Helper()
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "store"), Options{LockTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644)
	if _, err := s.Snapshot(ctx, dir, SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	held, err := repo.LockFile(ctx, s.repo.LockPath(), true, time.Now().Add(time.Second), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir, held
}

// TestMaintenanceBegunOnAMissingStoreChangesNothing: a gc that began when
// there was no store holds no lock; if a snapshot makes the store meanwhile,
// the gc must not sweep it, or it deletes the packs a writer has flushed
// and not yet committed.
func TestMaintenanceBegunOnAMissingStoreChangesNothing(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "store"), Options{LockTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ss, err := s.begin(ctx, true, false) // as gc begins: no store, no lock
	if err != nil {
		t.Fatal(err)
	}
	defer ss.End()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644)
	if _, err := s.Snapshot(ctx, dir, SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	flushed := filepath.Join(s.repo.PacksDir(), strings.Repeat("ab", 16)+".pack") // another writer's, not yet committed
	if err := os.WriteFile(flushed, []byte("pack"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ss.collect(ctx, collectRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(flushed); err != nil {
		t.Fatalf("a gc that holds no lock swept the store made meanwhile: %v", err)
	}
	if err := ss.Update(func(*index.Tx) error { return nil }); err == nil {
		t.Fatal("a hold without the lock wrote to the database")
	}
}
