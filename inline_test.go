package casckpt

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/testtree"
)

// TestSmallTurnIsInline: a small turn writes no pack file: its pack is in
// the database, which reaches schema 2 with it (and not before), and
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
	if n := len(packNames(t, s)); n != 1 || schema() != index.SchemaBase || inlineCount(t, s) != 0 {
		t.Fatalf("a large snapshot: %d pack files, schema %d, %d inline packs; want 1, %d, 0", n, schema(), inlineCount(t, s), index.SchemaBase)
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
	if n := len(packNames(t, s)); n != 1 || schema() != index.SchemaInline || inlineCount(t, s) < 3 {
		t.Fatalf("after 3 small turns: %d pack files, schema %d, %d inline packs; want 1, %d, 3 or more", n, schema(), inlineCount(t, s), index.SchemaInline)
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
	if n := len(packNames(t, s)); n < 4 || inlineCount(t, s) != 0 {
		t.Fatalf("after a repair: %d pack files, %d inline packs; want the inline ones written out", n, inlineCount(t, s))
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
