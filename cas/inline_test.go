package cas

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"
)

// putInline stores objects through a Writer keeping packs of up to max
// bytes inline, commits them and returns their IDs and the packs added.
func putInline(t *testing.T, db *memIndex, dir *memPacks, max int64, objects [][]byte) ([]ID, []PackInfo) {
	t.Helper()
	ctx := context.Background()
	w := NewWriter(dir, NewStore(dir, db))
	w.SetInline(max)
	var ids []ID
	for _, o := range objects {
		id, err := w.Put(ctx, KindChunk, o)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	infos, err := w.Commit(ctx, db, false)
	if err != nil {
		t.Fatal(err)
	}
	return ids, infos
}

// checkGets fails unless every object of ids reads back as objects says.
func checkGets(t *testing.T, db *memIndex, dir *memPacks, ids []ID, objects [][]byte) {
	t.Helper()
	s := NewStore(dir, db)
	defer s.Close()
	for i, id := range ids {
		got, err := s.Get(context.Background(), id)
		if err != nil || !bytes.Equal(got, objects[i]) {
			t.Fatalf("object %d: %d bytes, %v; want %d bytes", i, len(got), err, len(objects[i]))
		}
	}
}

// TestInlinePacks: a Writer's pack of at most its inline size goes to the
// index, not the pack store, and reads back byte-exact; a larger one is
// written to the pack store; FoldInline moves every inline pack's objects
// into one pack of the pack store and deletes the inline ones.
func TestInlinePacks(t *testing.T) {
	db, dir := testDB(t)
	rng := rand.New(rand.NewPCG(5, 6))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return b
	}
	var ids []ID
	var objects [][]byte
	for i := range 3 {
		small := [][]byte{[]byte("small object " + string(rune('a'+i))), random(3000)}
		got, infos := putInline(t, db, dir, 64<<10, small)
		if len(infos) != 1 || !infos[0].Inline || len(dir.packs) != 0 {
			t.Fatalf("small objects: packs %+v, %d in the pack store; want one inline, none", infos, len(dir.packs))
		}
		ids, objects = append(ids, got...), append(objects, small...)
	}
	large := [][]byte{random(100 << 10)}
	got, infos := putInline(t, db, dir, 64<<10, large)
	if len(infos) != 1 || infos[0].Inline || len(dir.packs) != 1 {
		t.Fatalf("a large object: packs %+v, %d in the pack store; want one pack file", infos, len(dir.packs))
	}
	ids, objects = append(ids, got...), append(objects, large...)
	checkGets(t, db, dir, ids, objects)

	fold, err := FoldInline(context.Background(), db, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(dir.packs) != 2 || len(db.inline) != 0 || fold.PacksRewritten != 3 {
		t.Fatalf("after a fold: %d pack files, %d inline packs, %d rewritten; want 2, 0, 3", len(dir.packs), len(db.inline), fold.PacksRewritten)
	}
	for _, p := range db.packs {
		if p.Inline {
			t.Fatalf("inline pack %d is still recorded", p.Number)
		}
	}
	checkGets(t, db, dir, ids, objects)
}
