package casckpt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestBusyStoreGivesUpWithAClearMessage(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "store"), Options{LockTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644)
	if _, err := s.Snapshot(ctx, dir, SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	held, err := lockStore(ctx, s.lockPath(), true, time.Second) // as gc holds it
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = s.Snapshot(ctx, dir, SnapshotOptions{})
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "try again") || time.Since(start) > 2*time.Second {
		t.Fatalf("snapshot beside a held exclusive lock: %v after %v", err, time.Since(start))
	}
	// The holder goes away (a process that dies drops its flock the same
	// way): the next caller proceeds at once.
	held.unlock()
	if _, err := s.Snapshot(ctx, dir, SnapshotOptions{}); err != nil {
		t.Fatalf("after the holder went away: %v", err)
	}
}
