package casckpt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/internal/testtree"
)

// TestBigTreeSnapshotIsBulk: a tree of bulkTree bytes or more is stored
// at the default level (cas.Writer.SetBulk), which stores the same text in
// more bytes than the better level a smaller tree takes; either way the
// snapshot exports the tree and the store verifies.
func TestBigTreeSnapshotIsBulk(t *testing.T) {
	FilePacksOnly(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	words := make([]string, 3000)
	for i := range words {
		words[i] = fmt.Sprintf("%x", rng.Uint64()>>(rng.IntN(48)))
	}
	var text strings.Builder
	for text.Len() < 3<<20 { // one file: its chunks fill the blocks in one order
		fmt.Fprintf(&text, "\tif %s := %s(%s); %s != nil {\n", words[rng.IntN(len(words))], words[rng.IntN(len(words))], words[rng.IntN(len(words))], words[rng.IntN(len(words))])
	}
	tree := testtree.Tree{"src/big.go": testtree.Entry{Data: text.String()}}
	stored := func(threshold int64) int64 {
		t.Helper()
		old := bulkTree
		bulkTree = threshold
		defer func() { bulkTree = old }()
		s, err := Open(filepath.Join(t.TempDir(), "store"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		testtree.Write(t, dir, tree)
		res, err := s.Snapshot(ctx, dir, SnapshotOptions{})
		if err != nil || !res.Created {
			t.Fatalf("snapshot: %+v %v", res, err)
		}
		if d := testtree.Equal(testtree.WithDirs(tree), exportTree(t, s, dir, res.ID)); d != "" {
			t.Fatalf("the snapshot does not export its tree: %s", d)
		}
		if v, err := s.Verify(ctx); err != nil || len(v.Damaged) > 0 {
			t.Fatalf("verify: %+v %v", v.Damaged, err)
		}
		return res.Stored.StoredBytes
	}
	better, under := stored(64<<20), stored(4<<20)
	bulk, at := stored(1<<20), stored(int64(len(text.String())))
	if under != better || at != bulk {
		t.Fatalf("stored bytes: %d and %d under the threshold, %d and %d at or past it: want the same on each side", better, under, bulk, at)
	}
	if bulk <= better {
		t.Fatalf("the tree past the threshold took %d bytes, the one under it %d: want more at the default level", bulk, better)
	}
	t.Logf("3 MiB of text: %d bytes at the better level, %d at the default level", better, bulk)
}
