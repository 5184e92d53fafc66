package cas

import (
	"context"
	"errors"
	"testing"
)

// TestIndexTrees: trees are located as the index located them when the
// tree index was read, other objects as the index locates them now, and
// a store over it reads both.
func TestIndexTrees(t *testing.T) {
	ctx := context.Background()
	db, dir := testDB(t)
	var tree, chunk ID
	var w *Writer
	err := within(db, func(tx *memIndex) error {
		w = NewWriter(dir, NewStore(dir, tx))
		var err error
		if tree, err = w.Put(ctx, KindTree, []byte("a tree's bytes")); err != nil {
			return err
		}
		if chunk, err = w.Put(ctx, KindChunk, []byte("a chunk's bytes")); err != nil {
			return err
		}
		return w.Flush(ctx)
	})
	if err == nil {
		_, err = w.Commit(ctx, db, false)
	}
	if err != nil {
		t.Fatal(err)
	}
	idx, err := IndexTrees(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []ID{tree, chunk} {
		want, _ := db.Locate(id)
		if got, err := idx.Locate(id); err != nil || got != want {
			t.Fatalf("%s: %+v, %v; the index says %+v", id.Short(), got, err, want)
		}
	}
	s := NewStore(dir, idx)
	defer s.Close()
	if data, err := s.Get(ctx, tree); err != nil || string(data) != "a tree's bytes" {
		t.Fatalf("tree read through the tree index: %q, %v", data, err)
	}
	if data, err := s.Get(ctx, chunk); err != nil || string(data) != "a chunk's bytes" {
		t.Fatalf("chunk read through the tree index: %q, %v", data, err)
	}
	// The tree is located from memory, the chunk through the index.
	db.DeleteObject(tree)
	db.DeleteObject(chunk)
	if l, err := idx.Locate(tree); err != nil || l.ID != tree {
		t.Fatalf("the tree, read into the tree index before its deletion: %+v, %v", l, err)
	}
	if _, err := idx.Locate(chunk); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a chunk the index no longer holds: %v, want ErrNotFound", err)
	}
	if _, err := idx.Locate(Sum(KindTree, []byte("never stored"))); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a tree never stored: %v, want ErrNotFound", err)
	}
}
