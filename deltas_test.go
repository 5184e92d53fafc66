package casckpt

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/packstore"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/testtree"
)

// deltaTurns takes a snapshot of a tree of twelve source files, then
// turns that each edit two of them as an agent does (a line changed in
// the middle, lines appended), every one with opts, and returns the
// store, the project, the tree of each snapshot taken and the last
// snapshot's ID.
func deltaTurns(t *testing.T, turns int, opts SnapshotOptions) (*Store, string, map[cas.ID]testtree.Tree, cas.ID) {
	t.Helper()
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "store"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string][]string{}
	for i := range 12 {
		var lines []string
		for j := range 300 {
			lines = append(lines, fmt.Sprintf("\tx%d := compute(%d, %q) // line %d of file %d", j%17, i*j, strings.Repeat("ab", j%7), j, i))
		}
		files[fmt.Sprintf("pkg%d/file%d.go", i%3, i)] = lines
	}
	trees := map[cas.ID]testtree.Tree{}
	var last cas.ID
	for turn := range turns + 1 {
		if turn > 0 {
			for k := range 2 {
				name := fmt.Sprintf("pkg%d/file%d.go", (turn+k)%3, (turn*5+k*7)%12/3*3+(turn+k)%3)
				lines := files[name]
				lines[len(lines)/2] = fmt.Sprintf("// turn %d edited", turn)
				files[name] = append(lines, fmt.Sprintf("// turn %d appended %x", turn, turn*7919))
			}
		}
		tree := testtree.Tree{}
		for name, lines := range files {
			tree[name] = testtree.Entry{Data: strings.Join(lines, "\n") + "\n"}
		}
		setTree(t, dir, tree)
		r, err := s.Snapshot(ctx, dir, opts)
		if err != nil || !r.Created {
			t.Fatalf("turn %d: %+v %v", turn, r, err)
		}
		trees[r.ID], last = testtree.WithDirs(tree), r.ID
	}
	return s, dir, trees, last
}

// checkDeltaStore fails unless the store verifies, every snapshot listed
// exports exactly the tree it was taken of, the index holds at least
// minDeltas deltas, each of a base that is indexed and no delta, and the
// schema says deltas.
func checkDeltaStore(t *testing.T, s *Store, dir string, trees map[cas.ID]testtree.Tree, minDeltas int) {
	t.Helper()
	ctx := context.Background()
	if v, err := s.Verify(ctx); err != nil || len(v.Damaged) > 0 {
		t.Fatalf("verify: %+v %v", v.Damaged, err)
	}
	list, err := s.List(ctx, dir, 0)
	if err != nil || len(list) == 0 {
		t.Fatalf("list: %+v %v", list, err)
	}
	for _, sn := range list {
		if diff := testtree.Equal(trees[sn.ID], exportTree(t, s, dir, sn.ID)); diff != "" {
			t.Fatalf("snapshot %s: %s", sn.ID.Short(), diff)
		}
	}
	deltas, schema := 0, uint32(0)
	err = s.repo.DB().View(func(tx *index.Tx) error {
		schema = tx.Schema()
		objects := tx.Objects()
		return objects.ForEachObject(func(l cas.Location) error {
			if !l.IsDelta() {
				return nil
			}
			deltas++
			base, err := objects.Locate(l.Base)
			if err != nil || base.IsDelta() {
				return fmt.Errorf("the base of delta %s: %+v, %v", l.ID.Short(), base, err)
			}
			return nil
		})
	})
	if err != nil || deltas < minDeltas || (deltas > 0 && schema != index.SchemaDeltas) {
		t.Fatalf("%d deltas (want %d or more), schema %d: %v", deltas, minDeltas, schema, err)
	}
}

// TestCollectionsStoreDeltas: the collections of a store under keep-6
// store the kept turns' new versions of files and trees as deltas of
// their earlier versions; every kept snapshot verifies and exports
// exactly, and so do the last ones once a snapshot under keep-2 and a
// collection dropped every other one (the deltas' bases kept).
func TestCollectionsStoreDeltas(t *testing.T) {
	s, dir, trees, last := deltaTurns(t, 30, SnapshotOptions{Keep: 6, MaxStoreSize: -1})
	checkDeltaStore(t, s, dir, trees, 10)
	tree := exportTree(t, s, dir, last)
	tree["pkg0/new.go"] = testtree.Entry{Data: "package pkg0\n"}
	setTree(t, dir, tree)
	r, err := s.Snapshot(context.Background(), dir, SnapshotOptions{Keep: 2, MaxStoreSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	trees[r.ID] = testtree.WithDirs(tree)
	if _, err := s.GC(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkDeltaStore(t, s, dir, trees, 1)
}

// TestFoldStoresDeltas: a store that drops nothing folds its inline
// packs with deltas too, and reads back exactly.
func TestFoldStoresDeltas(t *testing.T) {
	old := foldAfterPacks
	foldAfterPacks = 4
	t.Cleanup(func() { foldAfterPacks = old })
	s, dir, trees, _ := deltaTurns(t, 12, SnapshotOptions{MaxStoreSize: -1})
	checkDeltaStore(t, s, dir, trees, 10)
}

// TestRepairTakesAWholeCopyOfADeltaWhoseBaseIsLost: when the pack of a
// delta's base is lost with the database, repair indexes the delta's
// object at a whole copy that another pack holds (as a crash between a
// sweep's copies and its deletions leaves one), whether it salvages that
// pack before the delta's or after it, and the object reads back exactly.
func TestRepairTakesAWholeCopyOfADeltaWhoseBaseIsLost(t *testing.T) {
	for _, copyName := range []string{strings.Repeat("0", 32), strings.Repeat("f", 32)} {
		t.Run("copy "+copyName[:1]+"...", func(t *testing.T) {
			ctx := context.Background()
			s, _, _, _ := deltaTurns(t, 30, SnapshotOptions{Keep: 6, MaxStoreSize: -1})
			FoldNow(t, s) // the inline packs, out of the database
			var delta cas.Location
			var data []byte
			var basePack string
			err := s.read(ctx, func(v view) error {
				objects := v.Tx.Objects()
				err := objects.ForEachObject(func(l cas.Location) error {
					if !l.IsDelta() || l.Kind != cas.KindChunk || !delta.ID.IsZero() {
						return nil
					}
					base, err := objects.Locate(l.Base)
					if err != nil || base.Pack == l.Pack {
						return err
					}
					p, err := objects.Pack(base.Pack)
					delta, basePack = l, p.FileName()
					return err
				})
				if err != nil || delta.ID.IsZero() {
					return fmt.Errorf("no delta of a chunk whose base is in another pack: %v", err)
				}
				store := cas.NewStore(s.repo.Packs(), objects)
				defer store.Close()
				data, err = store.Get(ctx, delta.ID)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			// The whole copy: a pack of its own, renamed to sort first or last.
			spare := t.TempDir()
			w := cas.NewWriter(packstore.NewLocal(spare, nil), nil)
			if id, err := w.Put(ctx, delta.Kind, data); err != nil || id != delta.ID {
				t.Fatalf("put %s: %s %v", delta.ID.Short(), id.Short(), err)
			}
			if err := w.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			written, err := filepath.Glob(filepath.Join(spare, "*"+cas.PackSuffix))
			if err != nil || len(written) != 1 {
				t.Fatalf("the spare pack: %v %v", written, err)
			}
			packs := s.repo.PacksDir()
			must(t, os.Rename(written[0], filepath.Join(packs, copyName+cas.PackSuffix)))
			must(t, os.Remove(filepath.Join(packs, basePack)))
			must(t, os.Remove(filepath.Join(s.Location(), "casckpt.db")))
			if _, err := s.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			err = s.read(ctx, func(v view) error {
				l, err := v.Tx.Objects().Locate(delta.ID)
				if err != nil {
					return err
				}
				p, err := v.Tx.Objects().Pack(l.Pack)
				if err != nil {
					return err
				}
				if l.IsDelta() || p.FileName() != copyName+cas.PackSuffix {
					return fmt.Errorf("indexed in %s (a delta: %v), want the whole copy", p.FileName(), l.IsDelta())
				}
				store := cas.NewStore(s.repo.Packs(), v.Tx.Objects())
				defer store.Close()
				got, err := store.Get(ctx, delta.ID)
				if err == nil && !bytes.Equal(got, data) {
					err = fmt.Errorf("reads back %d bytes, not the %d stored", len(got), len(data))
				}
				return err
			})
			if err != nil {
				t.Fatalf("object %s after repair: %v", delta.ID.Short(), err)
			}
		})
	}
}
