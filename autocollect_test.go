package casckpt

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/testtree"
)

// TestSnapshotCollectsAfterEnoughDrops: under a keep rule, the snapshot
// whose commit brings the snapshots dropped since the last collection to
// autoCollectAfter collects the garbage on its way out, and only then: the
// packs of the dropped snapshots are deleted, and the kept one verifies
// and exports exactly.
func TestSnapshotCollectsAfterEnoughDrops(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "store"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var tree testtree.Tree
	for i := range autoCollectAfter + 1 {
		tree = testtree.Tree{"data.txt": {Data: fmt.Sprintf("version %d\n%0200d\n", i, i)}}
		setTree(t, dir, tree)
		r, err := s.Snapshot(ctx, dir, SnapshotOptions{Keep: 1, MaxStoreSize: -1})
		if err != nil || !r.Created {
			t.Fatalf("snapshot %d: %+v %v", i, r, err)
		}
		packs := len(indexedPacks(t, s)) // pack files and inline packs
		switch {
		case i < autoCollectAfter && packs != i+1:
			t.Fatalf("after snapshot %d (%d dropped): %d packs, want %d: nothing is collected before %d drops", i, i, packs, i+1, autoCollectAfter)
		case i == autoCollectAfter && packs != 1:
			t.Fatalf("after the %d-th drop: %d packs, want the kept snapshot's one", i, packs)
		}
	}
	if v, err := s.Verify(ctx); err != nil || len(v.Damaged) > 0 {
		t.Fatalf("verify: %+v %v", v.Damaged, err)
	}
	list, err := s.List(ctx, dir, 0)
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %+v %v", list, err)
	}
	if diff := testtree.Equal(testtree.WithDirs(tree), exportTree(t, s, dir, list[0].ID)); diff != "" {
		t.Fatal(diff)
	}
}

// indexedPacks returns the packs the store's index records: its pack
// files and its inline packs.
func indexedPacks(t *testing.T, s *Store) []cas.PackInfo {
	t.Helper()
	var packs []cas.PackInfo
	if err := s.repo.DB().View(func(tx *index.Tx) (err error) { packs, err = tx.Objects().Packs(); return err }); err != nil {
		t.Fatal(err)
	}
	return packs
}
