package casckpt_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/testtree"
	"github.com/casckpt/casckpt/manifest"
)

// repairFixture is a store with two projects: p1 with three snapshots (the
// oldest pinned, then one forgotten but not yet collected), p2 with one.
type repairFixture struct {
	s         *casckpt.Store
	p1, p2    string
	trees     map[cas.ID]testtree.Tree // every kept snapshot's content
	order     map[string][]cas.ID      // kept snapshots, newest first
	pinned    cas.ID
	forgotten cas.ID
}

func newRepairFixture(t *testing.T) *repairFixture {
	t.Helper()
	ctx := context.Background()
	fx := &repairFixture{s: openStore(t), p1: t.TempDir(), p2: t.TempDir(), trees: map[cas.ID]testtree.Tree{}, order: map[string][]cas.ID{}}
	take := func(dir string, tree testtree.Tree, reason string) cas.ID {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
		testtree.Write(t, dir, tree)
		r := mustSnapshot(t, fx.s, dir, casckpt.SnapshotOptions{Reason: reason})
		fx.trees[r.ID] = testtree.WithDirs(tree)
		fx.order[dir] = append([]cas.ID{r.ID}, fx.order[dir]...)
		return r.ID
	}
	fx.pinned = take(fx.p1, testtree.Tree{"a.go": {Data: "one\n"}, "bin/run": {Data: "#!/bin/sh\n", Exec: true}}, "first")
	if _, err := fx.s.Pin(ctx, fx.p1, casckpt.Ref(fx.pinned.String())); err != nil {
		t.Fatal(err)
	}
	fx.forgotten = take(fx.p1, testtree.Tree{"a.go": {Data: "two\n"}, "link": {Link: "a.go"}}, "second")
	take(fx.p1, testtree.Tree{"a.go": {Data: "three\n"}, "big.bin": {Data: string(bytes.Repeat([]byte("0123456789"), 60_000))}}, "third")
	take(fx.p2, testtree.Tree{"main.go": {Data: "package main\n"}}, "other")
	if _, err := fx.s.Forget(ctx, fx.p1, casckpt.Ref(fx.forgotten.String())); err != nil {
		t.Fatal(err)
	}
	fx.order[fx.p1] = slices.DeleteFunc(fx.order[fx.p1], func(id cas.ID) bool { return id == fx.forgotten })
	delete(fx.trees, fx.forgotten)
	return fx
}

// listed returns a project's snapshots, newest first.
func (fx *repairFixture) listed(t *testing.T, dir string) []casckpt.ListEntry {
	t.Helper()
	list, err := fx.s.List(context.Background(), dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// checkRestores restores every kept snapshot of both projects and compares
// the trees byte for byte.
func (fx *repairFixture) checkRestores(t *testing.T) {
	t.Helper()
	for _, dir := range []string{fx.p1, fx.p2} {
		for _, id := range fx.order[dir] {
			if _, err := fx.s.Restore(context.Background(), dir, casckpt.Ref(id.String()), casckpt.RestoreOptions{}); err != nil {
				t.Fatalf("restore %s: %v", id.Short(), err)
			}
			if diff := testtree.Equal(fx.trees[id], testtree.Read(t, dir)); diff != "" {
				t.Fatalf("restore %s after repair: %s", id.Short(), diff)
			}
		}
	}
}

func ids(list []casckpt.ListEntry) []cas.ID {
	var out []cas.ID
	for _, e := range list {
		out = append(out, e.ID)
	}
	return out
}

// TestRepairOfAnIntactDatabaseChangesNothing: the records, pins and the
// forgetting are kept; the old database is kept beside the new one.
func TestRepairOfAnIntactDatabaseChangesNothing(t *testing.T) {
	fx := newRepairFixture(t)
	leftover := filepath.Join(fx.s.Location(), "casckpt.db.tmp-0123456789abcdef") // of a killed repair
	os.WriteFile(leftover, []byte("half made"), 0o600)
	res, err := fx.s.Repair(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(leftover); err == nil {
		t.Fatal("repair left a half-made database of an earlier one")
	}
	if res.Projects != 2 || res.Snapshots != 3 || res.FromOldDatabase != 3 || res.PacksRead != 4 || len(res.DamagedPacks) != 0 {
		t.Fatalf("repair: %+v", res)
	}
	if _, err := os.Stat(res.OldDatabase); err != nil {
		t.Fatalf("old database not kept: %v", err)
	}
	list := fx.listed(t, fx.p1)
	if !slices.Equal(ids(list), fx.order[fx.p1]) || !list[1].Pinned {
		t.Fatalf("p1 after repair: %v, want %v with the oldest pinned", ids(list), fx.order[fx.p1])
	}
	verifyClean(t, fx.s)
	fx.checkRestores(t)
}

// TestRepairOfALostDatabase rebuilds every snapshot from the backups of
// their records in the packs: same IDs, same order, same content. Pins are
// lost and a snapshot forgotten but not yet collected comes back, as the
// closing note of the repair says.
func TestRepairOfALostDatabase(t *testing.T) {
	ctx := context.Background()
	fx := newRepairFixture(t)
	casckpt.FoldNow(t, fx.s) // a rebuild from the pack files cannot see inline packs
	if err := os.Remove(filepath.Join(fx.s.Location(), "casckpt.db")); err != nil {
		t.Fatal(err)
	}
	if list := fx.listed(t, fx.p1); len(list) != 0 {
		t.Fatalf("%d snapshots without a database", len(list))
	}
	res, err := fx.s.Repair(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Projects != 2 || res.Snapshots != 4 || res.FromOldDatabase != 0 || res.OldDatabase != "" {
		t.Fatalf("repair: %+v", res)
	}
	want := slices.Insert(slices.Clone(fx.order[fx.p1]), 1, fx.forgotten)
	if got := ids(fx.listed(t, fx.p1)); !slices.Equal(got, want) {
		t.Fatalf("p1 rebuilt: %v, want %v", got, want)
	}
	if got := ids(fx.listed(t, fx.p2)); !slices.Equal(got, fx.order[fx.p2]) {
		t.Fatalf("p2 rebuilt: %v, want %v", got, fx.order[fx.p2])
	}
	verifyClean(t, fx.s)
	fx.checkRestores(t)
	// The store goes on: a new snapshot follows the rebuilt ones, and gc
	// keeps everything listed.
	os.WriteFile(filepath.Join(fx.p1, "new.txt"), []byte("new"), 0o644)
	mustSnapshot(t, fx.s, fx.p1, casckpt.SnapshotOptions{})
	if list := fx.listed(t, fx.p1); len(list) != 4 {
		t.Fatalf("%d snapshots after a new one, want 4", len(list))
	}
	if _, err := fx.s.GC(ctx); err != nil {
		t.Fatal(err)
	}
	verifyClean(t, fx.s)
}

// TestRepairOfDamagedPacks: a pack whose table is damaged is read object by
// object; a pack with nothing readable is set aside, and verify then names
// the snapshots that needed it.
func TestRepairOfDamagedPacks(t *testing.T) {
	ctx := context.Background()
	casckpt.FilePacksOnly(t) // a pack file per snapshot
	fx := newRepairFixture(t)
	packs, _ := filepath.Glob(filepath.Join(fx.s.Location(), "packs", "*.pack"))
	slices.SortFunc(packs, func(a, b string) int { return fileTime(t, a).Compare(fileTime(t, b)) })
	// The first pack (p1's first snapshot): damage its table.
	b, _ := os.ReadFile(packs[0])
	b[len(b)-20] ^= 0xff
	os.WriteFile(packs[0], b, 0o600)
	// The last (p2's): nothing readable.
	os.WriteFile(packs[3], bytes.Repeat([]byte{0xB7}, 500), 0o600)
	os.Remove(filepath.Join(fx.s.Location(), "casckpt.db"))

	res, err := fx.s.Repair(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.DamagedPacks) != 1 || res.DamagedPacks[0] != filepath.Base(packs[0]) ||
		len(res.UnreadablePacks) != 1 || res.UnreadablePacks[0] != filepath.Base(packs[3]) {
		t.Fatalf("repair: %+v", res)
	}
	if _, err := os.Stat(packs[3] + ".damaged"); err != nil {
		t.Fatalf("the unreadable pack was not set aside: %v", err)
	}
	// p2's only snapshot had its record backup in the lost pack: p2 is gone;
	// p1's snapshots are all back and whole.
	if len(fx.listed(t, fx.p2)) != 0 {
		t.Fatal("p2 listed a snapshot whose pack is unreadable")
	}
	if got := ids(fx.listed(t, fx.p1)); len(got) != 3 {
		t.Fatalf("p1: %d snapshots, want 3", len(got))
	}
	verifyClean(t, fx.s)
}

func fileTime(t *testing.T, p string) time.Time {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.ModTime()
}

// TestGCRefusesAnIndexThatLostLiveObjects: when the index has lost the
// entry of an object a kept snapshot needs, gc would take the object for
// garbage and delete its pack. It must refuse and delete nothing; repair
// brings the entry back from the pack, and gc then works.
func TestGCRefusesAnIndexThatLostLiveObjects(t *testing.T) {
	ctx := context.Background()
	fx := newRepairFixture(t)
	db := index.Open(filepath.Join(fx.s.Location(), "casckpt.db"), index.Options{Timeout: time.Second, Chunker: manifest.ChunkerName})
	err := db.Update(func(tx *index.Tx) error {
		// Drop every chunk entry: the live ones among them are lost.
		var chunks []cas.ID
		objects := tx.Objects()
		objects.ForEachObject(func(l cas.Location) error {
			if l.Kind == cas.KindChunk {
				chunks = append(chunks, l.ID)
			}
			return nil
		})
		for _, id := range chunks {
			if err := objects.DeleteObject(id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := filepath.Glob(filepath.Join(fx.s.Location(), "packs", "*"))
	if _, err := fx.s.GC(ctx); err == nil || !strings.Contains(err.Error(), "casckpt repair") {
		t.Fatalf("gc on an index that lost live objects: %v", err)
	}
	if after, _ := filepath.Glob(filepath.Join(fx.s.Location(), "packs", "*")); !slices.Equal(before, after) {
		t.Fatalf("gc refused but changed the packs: %v -> %v", before, after)
	}
	if _, err := fx.s.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.s.GC(ctx); err != nil {
		t.Fatalf("gc after repair: %v", err)
	}
	verifyClean(t, fx.s)
	fx.checkRestores(t)
}

// listing is what a user sees of a project: IDs newest first, with pins
// and reasons.
func listing(t *testing.T, s *casckpt.Store, dir string) []string {
	t.Helper()
	list, err := s.List(context.Background(), dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list {
		out = append(out, fmt.Sprintf("%s pinned=%v %q", e.ID.Short(), e.Pinned, e.Reason))
	}
	return out
}

// TestRepairAfterRandomHistories runs random histories (snapshots under a
// small keep, pins, forgets, gc, prune to a cap) over two projects and
// then repairs: with the database intact, every listing is unchanged, pins
// included; with the database deleted, every snapshot is back in the same
// order (with no pins), and verify is clean.
func TestRepairAfterRandomHistories(t *testing.T) {
	seeds := 6
	if testing.Short() {
		seeds = 2
	}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t)
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			gens := []*treeGen{{rng: rng, dir: t.TempDir()}, {rng: rng, dir: t.TempDir()}}
			for range 30 {
				g := gens[rng.IntN(2)]
				var err error
				switch op := rng.IntN(10); {
				case op < 6:
					for range 1 + rng.IntN(4) {
						g.edit(t)
					}
					_, err = s.Snapshot(ctx, g.dir, casckpt.SnapshotOptions{Keep: 4, Reason: fmt.Sprint("op ", op)})
				case op == 6:
					_, err = s.Pin(ctx, g.dir, casckpt.Ref(fmt.Sprintf("@%d", 1+rng.IntN(3))))
				case op == 7:
					_, err = s.Forget(ctx, g.dir, casckpt.Ref(fmt.Sprintf("@%d", 1+rng.IntN(3))))
				case op == 8:
					_, err = s.GC(ctx)
				default:
					_, err = s.Prune(ctx, casckpt.PruneOptions{MaxSize: 2 << 20, KeepOrphans: true})
				}
				if err != nil && !errors.Is(err, casckpt.ErrNotFound) && !errors.Is(err, casckpt.ErrRefused) {
					t.Fatal(err)
				}
			}
			before := [][]string{listing(t, s, gens[0].dir), listing(t, s, gens[1].dir)}
			if _, err := s.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			for i, g := range gens {
				if got := listing(t, s, g.dir); !slices.Equal(got, before[i]) {
					t.Fatalf("project %d after repairing an intact database:\n%q\nwant\n%q", i, got, before[i])
				}
			}
			verifyClean(t, s)

			casckpt.FoldNow(t, s) // a rebuild from the pack files cannot see inline packs
			os.Remove(filepath.Join(s.Location(), "casckpt.db"))
			if _, err := s.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			for i, g := range gens {
				got := listing(t, s, g.dir)
				var kept []string // before's, in order, among what came back
				for _, line := range got {
					id := strings.Fields(line)[0]
					for _, b := range before[i] {
						if strings.Fields(b)[0] == id {
							kept = append(kept, strings.Replace(b, "pinned=true", "pinned=false", 1))
						}
					}
				}
				var unpinned []string
				for _, b := range before[i] {
					unpinned = append(unpinned, strings.Replace(b, "pinned=true", "pinned=false", 1))
				}
				if !slices.Equal(kept, unpinned) {
					t.Fatalf("project %d rebuilt from the packs alone:\n%q\nwant every one of\n%q\nin order", i, got, before[i])
				}
			}
			verifyClean(t, s)
		})
	}
}

// TestRepairThenSnapshotHealsADamagedChunk: a chunk damaged on disk is
// shared by every snapshot of its content, since a snapshot does not store
// what the index says is stored. Repair drops the damaged object from the
// index; the next snapshot of a tree that still holds the content stores it
// again, and the damaged snapshots are whole again.
func TestRepairThenSnapshotHealsADamagedChunk(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	dir := t.TempDir()
	randomFile(t, filepath.Join(dir, "big.txt"), 60_000)
	big, _ := os.ReadFile(filepath.Join(dir, "big.txt"))
	testtree.Write(t, dir, testtree.Tree{"a.txt": {Data: "one"}})
	first := mustSnapshot(t, s, dir, casckpt.SnapshotOptions{})
	// Damage big.txt's content: it is almost all of the only pack, and,
	// random, stored as it is, so the middle byte is one of its own.
	casckpt.FoldNow(t, s)
	packs, _ := filepath.Glob(filepath.Join(s.Location(), "packs", "*.pack"))
	b, _ := os.ReadFile(packs[0])
	b[len(b)/2] ^= 0xff
	os.WriteFile(packs[0], b, 0o600)
	v, err := s.Verify(ctx)
	if err != nil || len(v.Damaged) != 1 {
		t.Fatalf("verify before: %+v %v", v.Damaged, err)
	}
	// A snapshot now would share the damaged chunk: the index vouches for it.
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("two"), 0o644)
	mustSnapshot(t, s, dir, casckpt.SnapshotOptions{})
	if v, _ := s.Verify(ctx); len(v.Damaged) != 2 {
		t.Fatalf("%d damaged snapshots, want both sharing the chunk", len(v.Damaged))
	}
	res, err := s.Repair(ctx)
	if err != nil || len(res.DamagedPacks) != 1 {
		t.Fatalf("repair: %+v %v", res, err)
	}
	// big.txt still holds the content: the next snapshot stores it again.
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("three"), 0o644)
	mustSnapshot(t, s, dir, casckpt.SnapshotOptions{})
	verifyClean(t, s)
	os.WriteFile(filepath.Join(dir, "big.txt"), []byte("changed"), 0o644)
	if _, err := s.Restore(ctx, dir, casckpt.Ref(first.ID.String()), casckpt.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "big.txt")); !bytes.Equal(got, big) {
		t.Fatal("the healed snapshot does not restore the content")
	}
}
