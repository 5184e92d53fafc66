package casckpt_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/testtree"
)

// TestClearBesideANewStore: a snapshot that begins once Clear has removed
// the lock file makes a new store in the directory before Clear removes
// it. Clear still succeeds (the old store is gone), and the new store
// keeps that snapshot, intact.
func TestClearBesideANewStore(t *testing.T) {
	ctx := context.Background()
	storeDir := filepath.Join(t.TempDir(), "store")
	s, err := casckpt.Open(storeDir, casckpt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	old, fresh := t.TempDir(), t.TempDir()
	testtree.Write(t, old, testtree.Tree{"f": {Data: "the cleared store's"}})
	testtree.Write(t, fresh, testtree.Tree{"g": {Data: "the new store's"}})
	if _, err := s.Snapshot(ctx, old, casckpt.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	other, err := casckpt.Open(storeDir, casckpt.Options{}) // another process
	if err != nil {
		t.Fatal(err)
	}
	var made casckpt.SnapshotResult
	casckpt.OnClear(t, func() {
		if made, err = other.Snapshot(ctx, fresh, casckpt.SnapshotOptions{}); err != nil {
			t.Errorf("snapshot while the store is cleared: %v", err)
		}
	})
	if err := s.Clear(ctx); err != nil {
		t.Fatalf("clear beside a snapshot that made a new store: %v", err)
	}
	if list, err := other.List(ctx, old, 0); err != nil || len(list) != 0 {
		t.Fatalf("the cleared project lists %d snapshots (%v), want none", len(list), err)
	}
	list, err := other.List(ctx, fresh, 0)
	if err != nil || len(list) != 1 || list[0].ID != made.ID {
		t.Fatalf("the new store lists %+v (%v), want the snapshot made beside the clear", list, err)
	}
	checkVerifies(t, other)
}
