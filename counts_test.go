package casckpt_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/manifest"
)

// indexOf opens s's database directly, to look at its caches.
func indexOf(s *casckpt.Store) *index.DB {
	return index.Open(filepath.Join(s.Location(), "casckpt.db"), index.Options{Timeout: time.Second, Chunker: manifest.ChunkerName})
}

// cachedCounts returns the change counts cached for each snapshot of
// project workdir against the next older one (the oldest: the empty
// tree), newest first; ok is false for a pair not cached.
func cachedCounts(t *testing.T, s *casckpt.Store, workdir string) (counts []index.Counts, ok []bool, roots []cas.ID) {
	t.Helper()
	err := indexOf(s).View(func(tx *index.Tx) error {
		snaps, err := tx.Snapshots(workdir)
		for i, sn := range snaps {
			from := manifest.EmptyTreeID
			if i+1 < len(snaps) {
				from = snaps[i+1].Root
			}
			c, found := tx.ChangeCounts(from, sn.Root)
			counts, ok, roots = append(counts, c), append(ok, found), append(roots, sn.Root)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return counts, ok, roots
}

// listCounts lists the project in dir and returns each entry's counts.
func listCounts(t *testing.T, s *casckpt.Store, dir string) []index.Counts {
	t.Helper()
	list, err := s.List(context.Background(), dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []index.Counts
	for _, e := range list {
		if e.Damaged {
			t.Fatalf("list: %s is damaged", e.ID.Short())
		}
		out = append(out, index.Counts{Files: e.FilesChanged, Insertions: e.Insertions, Deletions: e.Deletions})
	}
	return out
}

// TestListCachesCountsAndGCDropsThem: list stores the counts it computed;
// a later list reads them from the cache; a collection that deletes a
// snapshot's tree drops the counts from and to it, and keeps the others.
func TestListCachesCountsAndGCDropsThem(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	dir := t.TempDir()
	var workdir string
	for _, data := range []string{"1\n", "1\n2\n3\n", "x\n3\n"} {
		os.WriteFile(filepath.Join(dir, "f.txt"), []byte(data), 0o644)
		workdir = mustSnapshot(t, s, dir, casckpt.SnapshotOptions{}).Project
	}
	if _, ok, _ := cachedCounts(t, s, workdir); ok[0] || ok[1] || ok[2] {
		t.Fatalf("counts cached before any list: %v", ok)
	}
	fresh := listCounts(t, s, dir)
	want := []index.Counts{{Files: 1, Insertions: 1, Deletions: 2}, {Files: 1, Insertions: 2}, {Files: 1, Insertions: 1}}
	cached, ok, roots := cachedCounts(t, s, workdir)
	for i := range want {
		if fresh[i] != want[i] || cached[i] != want[i] || !ok[i] {
			t.Fatalf("@%d: listed %+v, cached %+v (%v), want %+v", i+1, fresh[i], cached[i], ok[i], want[i])
		}
	}
	// A later list reads the cache: a planted entry shows.
	planted := index.Counts{Files: 7, Insertions: 8, Deletions: 9}
	put := func(c index.Counts) {
		if err := indexOf(s).Update(func(tx *index.Tx) error { return tx.PutChangeCounts(roots[1], roots[0], c) }); err != nil {
			t.Fatal(err)
		}
	}
	put(planted)
	if got := listCounts(t, s, dir); got[0] != planted || got[1] != want[1] {
		t.Fatalf("list after planting counts: %+v", got)
	}
	put(want[0])

	// Forget @2 and collect: its tree goes, and with it the counts from
	// and to it; the counts of @3 (from the empty tree) stay.
	list, _ := s.List(ctx, dir, 0)
	if _, err := s.Forget(ctx, dir, casckpt.Ref(list[1].ID.String())); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GC(ctx); err != nil {
		t.Fatal(err)
	}
	err := indexOf(s).View(func(tx *index.Tx) error {
		_, toGone := tx.ChangeCounts(roots[2], roots[1])
		_, fromGone := tx.ChangeCounts(roots[1], roots[0])
		c, oldest := tx.ChangeCounts(manifest.EmptyTreeID, roots[2])
		if toGone || fromGone || !oldest || c != want[2] {
			t.Errorf("counts after gc: to the deleted tree %v, from it %v, of the oldest %+v %v", toGone, fromGone, c, oldest)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The new pair is computed and cached like any other.
	if got := listCounts(t, s, dir); len(got) != 2 || got[0] != (index.Counts{Files: 1, Insertions: 2, Deletions: 1}) {
		t.Fatalf("list after gc: %+v", got)
	}
	if _, ok, _ := cachedCounts(t, s, workdir); !ok[0] || !ok[1] {
		t.Fatalf("counts cached after gc and list: %v", ok)
	}
}

// TestBusyStoreDoesNotFailList: when another process holds the database,
// list and turns still answer, with fresh counts, and cache nothing; the
// next call caches them.
func TestBusyStoreDoesNotFailList(t *testing.T) {
	s := openStore(t)
	dir := t.TempDir()
	var workdir string
	for i, data := range []string{"1\n", "1\n2\n"} {
		os.WriteFile(filepath.Join(dir, "f.txt"), []byte(data), 0o644)
		workdir = mustSnapshot(t, s, dir, casckpt.SnapshotOptions{Turn: "t1", EndTurn: i == 1}).Project
	}
	// A reader holds the database file: no write can start.
	err := indexOf(s).View(func(*index.Tx) error {
		if got := listCounts(t, s, dir); got[0] != (index.Counts{Files: 1, Insertions: 1}) {
			t.Errorf("list of a busy store: %+v", got)
		}
		if tr := turnOf(t, s, dir, "t1"); tr.FilesChanged != 1 || tr.Insertions != 1 {
			t.Errorf("turns of a busy store: %+v", tr)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := cachedCounts(t, s, workdir); ok[0] || ok[1] {
		t.Fatalf("counts cached by a list of a busy store: %v", ok)
	}
	if tr := turnOf(t, s, dir, "t1"); tr.FilesChanged != 1 || tr.Insertions != 1 {
		t.Errorf("turns: %+v", tr)
	}
	if _, ok, _ := cachedCounts(t, s, workdir); !ok[0] || ok[1] {
		t.Fatalf("counts cached by turns (its one pair): %v", ok)
	}
}
