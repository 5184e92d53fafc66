package casckpt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/casckpt/casckpt/internal/scan"
	"github.com/casckpt/casckpt/internal/testtree"
)

// TestBigSnapshotCommitsAhead: a snapshot past the batch size (here 16
// objects) commits its packs, then its objects in parts of about 16, and
// its stat cache directory by directory before its record: the store verifies clean, the snapshot
// exports the tree it was taken of, its stored bytes are those of its
// packs, the stat cache written ahead vouches for every file in the next
// scan, and a change after it is a snapshot of its own.
func TestBigSnapshotCommitsAhead(t *testing.T) {
	defer scan.SetClock(func() time.Time { return time.Now().Add(time.Hour) })()
	FilePacksOnly(t)
	CommitAheadPast(t, 16, 1)
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "store"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tree := testtree.Tree{}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 3 { // 12 MiB that do not compress: two packs
		b := make([]byte, 4<<20)
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		tree[fmt.Sprintf("data/blob%d.bin", i)] = testtree.Entry{Data: string(b)}
	}
	for i := range 30 {
		tree[fmt.Sprintf("src/d%d/f%d.go", i%5, i)] = testtree.Entry{Data: fmt.Sprintf("package d\n// %d\n", i)}
	}
	testtree.Write(t, dir, tree)
	r1, err := s.Snapshot(ctx, dir, SnapshotOptions{})
	if err != nil || !r1.Created || r1.Files != 33 {
		t.Fatalf("first snapshot: %+v %v", r1, err)
	}
	if v, err := s.Verify(ctx); err != nil || len(v.Damaged) > 0 {
		t.Fatalf("verify: %+v %v", v.Damaged, err)
	}
	if d := testtree.Equal(testtree.WithDirs(tree), exportTree(t, s, dir, r1.ID)); d != "" {
		t.Fatalf("the snapshot does not export its tree: %s", d)
	}
	var packed int64
	packs, _ := os.ReadDir(s.repo.PacksDir())
	for _, p := range packs {
		if fi, err := p.Info(); err == nil {
			packed += fi.Size()
		}
	}
	st, err := s.Status(ctx)
	if err != nil || len(st.Projects) != 1 || len(packs) < 2 || st.Projects[0].StoredBytes != packed {
		t.Fatalf("the record says it added %+v (%v); the %d pack files hold %d bytes", st.Projects, err, len(packs), packed)
	}
	again, err := s.Snapshot(ctx, dir, SnapshotOptions{})
	if err != nil || again.Created || again.ID != r1.ID || again.Hashed != 0 {
		t.Fatalf("no-change snapshot after one committed ahead: %+v %v", again, err)
	}
	testtree.Write(t, dir, testtree.Tree{"src/d1/new.go": {Data: "package d\n"}})
	tree["src/d1/new.go"] = testtree.Entry{Data: "package d\n"}
	r2, err := s.Snapshot(ctx, dir, SnapshotOptions{})
	if err != nil || !r2.Created || r2.Hashed != 1 {
		t.Fatalf("snapshot of a change: %+v %v", r2, err)
	}
	if d := testtree.Equal(testtree.WithDirs(tree), exportTree(t, s, dir, r2.ID)); d != "" {
		t.Fatalf("the second snapshot does not export its tree: %s", d)
	}
}
