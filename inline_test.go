package casckpt

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/testtree"
)

// TestSmallTurnIsInline: a small turn writes no pack file: its pack is in
// the database, which reaches schema 3 with it (and not before), and
// every snapshot reads back byte-exact; a repair of the intact database
// writes the inline packs out as pack files first, losing nothing.
func TestSmallTurnIsInline(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "store"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	schema := func() (v uint32) {
		if err := s.repo.DB().View(func(tx *index.Tx) error { v = tx.Schema(); return nil }); err != nil {
			t.Fatal(err)
		}
		return v
	}
	// A large first snapshot goes to a pack file: the schema stays.
	rng := rand.New(rand.NewPCG(3, 4))
	data := make([]byte, 200<<10)
	for i := range data {
		data[i] = byte(rng.IntN(256))
	}
	big := testtree.Tree{"big.bin": {Data: string(data)}}
	setTree(t, dir, big)
	first, err := s.Snapshot(ctx, dir, SnapshotOptions{})
	if err != nil || !first.Created {
		t.Fatalf("first snapshot: %+v %v", first, err)
	}
	if n := len(packNames(t, s)); n != 1 || schema() != index.SchemaBase || InlinePacks(t, s) != 0 {
		t.Fatalf("a large snapshot: %d pack files, schema %d, %d inline packs; want 1, %d, 0", n, schema(), InlinePacks(t, s), index.SchemaBase)
	}
	trees := map[cas.ID]testtree.Tree{first.ID: big}
	tree := big
	for i := range 3 {
		tree = testtree.Edit(tree, testtree.Tree{"src/a.go": {Data: "package a // " + string(rune('a'+i)) + "\n"}}, "")
		setTree(t, dir, tree)
		r, err := s.Snapshot(ctx, dir, SnapshotOptions{Turn: "t", EndTurn: i == 2})
		if err != nil || !r.Created {
			t.Fatalf("turn %d: %+v %v", i, r, err)
		}
		trees[r.ID] = tree
	}
	if n := len(packNames(t, s)); n != 1 || schema() != index.SchemaInlinePieces || InlinePacks(t, s) < 3 {
		t.Fatalf("after 3 small turns: %d pack files, schema %d, %d inline packs; want 1, %d, 3 or more", n, schema(), InlinePacks(t, s), index.SchemaInlinePieces)
	}
	exportsAll := func(what string) {
		t.Helper()
		for id, want := range trees {
			if diff := testtree.Equal(testtree.WithDirs(want), exportTree(t, s, dir, id)); diff != "" {
				t.Fatalf("%s: snapshot %s: %s", what, id.Short(), diff)
			}
		}
		if v, err := s.Verify(ctx); err != nil || len(v.Damaged) > 0 {
			t.Fatalf("%s: verify %+v %v", what, v, err)
		}
	}
	exportsAll("inline")
	if _, err := s.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(packNames(t, s)); n < 4 || InlinePacks(t, s) != 0 {
		t.Fatalf("after a repair: %d pack files, %d inline packs; want the inline ones written out", n, InlinePacks(t, s))
	}
	exportsAll("repaired")
	if err := os.Remove(s.repo.DBPath()); err != nil {
		t.Fatal(err)
	}
	if res, err := s.Repair(ctx); err != nil || res.Snapshots != 4 {
		t.Fatalf("repair of a lost database after the inline packs were written out: %+v %v", res, err)
	}
	exportsAll("rebuilt")
}

// smallTurns takes n snapshots of dir, each a small edit of one file, with
// opts, and returns their IDs and trees.
func smallTurns(t *testing.T, s *Store, dir string, n int, opts SnapshotOptions) ([]cas.ID, map[cas.ID]testtree.Tree) {
	t.Helper()
	tree := testtree.Tree{"lib/keep.go": {Data: "package lib\n"}}
	var ids []cas.ID
	trees := map[cas.ID]testtree.Tree{}
	for i := range n {
		tree = testtree.Edit(tree, testtree.Tree{"src/a.go": {Data: fmt.Sprintf("package a // turn %d\n%0500d\n", i, i)}})
		setTree(t, dir, tree)
		r, err := s.Snapshot(context.Background(), dir, opts)
		if err != nil || !r.Created {
			t.Fatalf("turn %d: %+v %v", i, r, err)
		}
		ids, trees[r.ID] = append(ids, r.ID), tree
	}
	return ids, trees
}

// checkExports fails unless every snapshot of trees exports its tree and
// the store verifies clean.
func checkExports(t *testing.T, s *Store, dir string, trees map[cas.ID]testtree.Tree) {
	t.Helper()
	for id, want := range trees {
		if diff := testtree.Equal(testtree.WithDirs(want), exportTree(t, s, dir, id)); diff != "" {
			t.Fatalf("snapshot %s: %s", id.Short(), diff)
		}
	}
	if v, err := s.Verify(context.Background()); err != nil || len(v.Damaged) > 0 {
		t.Fatalf("verify: %+v %v", v, err)
	}
}

// TestFoldMovesInlinePacksIntoOnePackFile: the turn that brings the
// inline packs to the fold's threshold moves them all into one pack file,
// and every snapshot still reads back and verifies.
func TestFoldMovesInlinePacksIntoOnePackFile(t *testing.T) {
	FoldAfter(t, 5)
	s, err := Open(filepath.Join(t.TempDir(), "store"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	_, trees := smallTurns(t, s, dir, 4, SnapshotOptions{Keep: -1})
	if files, inline := len(packNames(t, s)), InlinePacks(t, s); files != 0 || inline != 4 {
		t.Fatalf("before the fold: %d pack files, %d inline packs; want 0, 4", files, inline)
	}
	checkExports(t, s, dir, trees)
	_, more := smallTurns(t, s, dir, 1, SnapshotOptions{Keep: -1})
	maps.Copy(trees, more)
	if files, inline := len(packNames(t, s)), InlinePacks(t, s); files != 1 || inline != 0 {
		t.Fatalf("after the fold: %d pack files, %d inline packs; want 1, 0", files, inline)
	}
	checkExports(t, s, dir, trees)
}

// TestGCFreesInlinePacks: forgotten snapshots' objects in inline packs are
// deleted by gc, their bytes counted as freed, and the small inline
// packs of the kept ones merged into a pack file (as small pack files
// are, four or more of them).
func TestGCFreesInlinePacks(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "store"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ids, trees := smallTurns(t, s, dir, 8, SnapshotOptions{Keep: -1})
	var refs []Ref
	for _, id := range ids[:3] {
		refs = append(refs, Ref(id.String()))
		delete(trees, id)
	}
	if _, err := s.Forget(ctx, dir, refs...); err != nil {
		t.Fatal(err)
	}
	res, err := s.GC(ctx)
	if err != nil || res.ObjectsDeleted == 0 || res.BytesFreed <= 0 {
		t.Fatalf("gc: %+v %v, want the forgotten snapshots' objects deleted and bytes freed", res, err)
	}
	if files, inline := len(packNames(t, s)), InlinePacks(t, s); files != 1 || inline != 0 {
		t.Fatalf("after gc: %d pack files, %d inline packs; want the kept ones' merged into 1, 0", files, inline)
	}
	if list, _ := s.List(ctx, dir, 0); len(list) != 5 {
		t.Fatalf("%d snapshots after gc, want 5", len(list))
	}
	checkExports(t, s, dir, trees)
}
