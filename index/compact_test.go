package index

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/internal/osfs"
)

// TestCompactDropsFreePages: a database whose records mostly turned over
// is rewritten smaller, with every record that remains; a tight or small
// one is left alone; a half-made copy a killed compaction left is removed.
func TestCompactDropsFreePages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	db := Open(path, Options{Timeout: time.Second, Chunker: "c"})
	put := func(from, to int) { putObjects(t, db, from, to) }
	put(0, 20000) // one transaction: few free pages
	if done, err := db.Compact(); err != nil || done {
		t.Fatalf("a tight database: compacted %v, %v; want it left alone", done, err)
	}
	err := db.Update(func(tx *Tx) error {
		for i := range 18000 {
			if err := tx.Objects().DeleteObject(cas.Sum(cas.KindChunk, fmt.Appendf(nil, "object %d", i))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	leftover := path + TempSuffix + "killed"
	if err := os.WriteFile(leftover, []byte("half a database"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := allocated(t, path)
	if done, err := db.Compact(); err != nil || !done {
		t.Fatalf("a database of 90%% free pages: compacted %v, %v", done, err)
	}
	if after := allocated(t, path); after*3 > before {
		t.Fatalf("compacted from %d to %d bytes on disk, want a third or less", before, after)
	}
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Fatalf("the killed compaction's copy is still there: %v", err)
	}
	n := 0
	err = db.View(func(tx *Tx) error {
		return tx.Objects().ForEachObject(func(l cas.Location) error {
			n++
			return nil
		})
	})
	if err != nil || n != 2000 {
		t.Fatalf("after compaction %d objects (%v), want 2000", n, err)
	}
	if done, err := db.Compact(); err != nil || done {
		t.Fatalf("compacted twice: %v, %v", done, err)
	}
}

// allocated is the disk space of the file at path.
func allocated(t *testing.T, path string) int64 {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := osfs.FromInfo(info)
	return st.Blocks * 512
}

// TestCompactLeavesRoomForInserts: the copy's pages keep room, so that
// the next turns' objects, whose hash keys land all over the object
// index, are taken in place rather than each splitting a full page.
func TestCompactLeavesRoomForInserts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	db := Open(path, Options{Timeout: time.Second, Chunker: "c"})
	put := func(from, to int) { putObjects(t, db, from, to) }
	for i := range 40 { // a store's turns: many small transactions
		put(i*100, i*100+100)
	}
	err := db.Update(func(tx *Tx) error {
		for i := range 2000 {
			if err := tx.Objects().DeleteObject(cas.Sum(cas.KindChunk, fmt.Appendf(nil, "object %d", i))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if done, err := db.Compact(); err != nil || !done {
		t.Fatalf("compacted %v, %v", done, err)
	}
	leaves := func() (n int) {
		t.Helper()
		if err := db.View(func(tx *Tx) error {
			n = tx.tx.Bucket(bucketObjects).Stats().LeafPageN
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := leaves()
	for i := range 5 { // five turns of ten objects each
		put(10000+i*10, 10000+i*10+10)
	}
	if after := leaves(); after > before+5 {
		t.Fatalf("50 inserts after a compaction grew the object index from %d to %d leaf pages", before, after)
	}
}

// putObjects puts objects from..to-1 in db's object index, in one
// transaction.
func putObjects(t *testing.T, db *DB, from, to int) {
	t.Helper()
	err := db.Update(func(tx *Tx) error {
		for i := from; i < to; i++ {
			id := cas.Sum(cas.KindChunk, fmt.Appendf(nil, "object %d", i))
			if err := tx.Objects().PutObject(cas.Location{Pack: 1, PackEntry: cas.PackEntry{ID: id, Kind: cas.KindChunk, RawLen: 10, StoredLen: 10, Offset: uint32(i)}}, false); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
