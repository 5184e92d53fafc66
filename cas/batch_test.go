package cas

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
)

// partsWriter returns a Writer holding, flushed, n objects of 3 MiB each
// that do not compress (three to a pack), and 300 small ones.
func partsWriter(t *testing.T, dir *memPacks, n int) (*Writer, [][]byte) {
	t.Helper()
	ctx := context.Background()
	w := NewWriter(dir, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	var objects [][]byte
	for i := range n + 300 {
		o := make([]byte, 3<<20)
		if i >= n {
			o = o[:100]
		}
		for j := range o {
			o[j] = byte(rng.Uint32())
		}
		if _, err := w.Put(ctx, KindChunk, o); err != nil {
			t.Fatal(err)
		}
		objects = append(objects, o)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return w, objects
}

// readable counts the objects that db locates and dir's packs return intact.
func readable(t *testing.T, db *memIndex, dir *memPacks, objects [][]byte) int {
	t.Helper()
	st := NewStore(dir, db)
	defer st.Close()
	n := 0
	for _, o := range objects {
		if got, err := st.Get(context.Background(), Sum(KindChunk, o)); err == nil && string(got) == string(o) {
			n++
		}
	}
	return n
}

// TestCommitInParts: a Writer's packs recorded in one transaction, then
// their objects in parts by ID range, each transaction holding only its
// range; every object reads back, Commit afterwards returns every pack's
// record, and the Writer takes no more Puts.
func TestCommitInParts(t *testing.T) {
	for _, kept := range []int{keptTrailers, 0} {
		old := keptTrailers
		keptTrailers = kept // 0: every trailer read back from its pack
		commitInParts(t)
		keptTrailers = old
	}
}

func commitInParts(t *testing.T) {
	db, dir := testDB(t)
	ctx := context.Background()
	w, objects := partsWriter(t, dir, 6)
	if got := w.Uncommitted(); got != 306 {
		t.Fatalf("Uncommitted = %d, want 306", got)
	}
	var sizes []int
	update := func(fn func(IndexWriter, bool) error) error {
		before := len(db.objects)
		err := fn(db, false)
		sizes = append(sizes, len(db.objects)-before)
		return err
	}
	if err := w.CommitInParts(ctx, update, 100); err != nil {
		t.Fatal(err)
	}
	if len(sizes) != 5 || sizes[0] != 0 {
		t.Fatalf("transactions adding %v objects: want the packs, then 4 parts", sizes)
	}
	for _, n := range sizes[1:] {
		if n < 30 || n > 130 {
			t.Fatalf("parts of %v objects, want about 306/4", sizes[1:])
		}
	}
	if got := readable(t, db, dir, objects); got != len(objects) {
		t.Fatalf("%d of %d objects readable", got, len(objects))
	}
	if _, err := w.Put(ctx, KindChunk, []byte("late")); err == nil {
		t.Fatal("a Put after CommitInParts was taken")
	}
	infos, err := w.Commit(ctx, db, false)
	if err != nil || len(infos) != 3 {
		t.Fatalf("Commit: %d packs, %v; want all 3", len(infos), err)
	}
}

// TestCommitInPartsFailures: a failure of the packs' transaction leaves
// the packs to Abort, which removes them; a failure of a part's leaves
// them to the index (their objects, in or out of it, garbage then), and
// Abort removes none.
func TestCommitInPartsFailures(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	for _, failAt := range []int{0, 2} {
		db, dir := testDB(t)
		w, objects := partsWriter(t, dir, 6)
		calls := 0
		update := func(fn func(IndexWriter, bool) error) error {
			calls++
			if calls-1 == failAt {
				return boom // rolled back: fn never ran
			}
			return fn(db, false)
		}
		if err := w.CommitInParts(ctx, update, 100); !errors.Is(err, boom) {
			t.Fatalf("fail at %d: %v", failAt, err)
		}
		w.Abort()
		left, _ := dir.names()
		if failAt == 0 && (len(left) != 0 || len(db.objects) != 0) {
			t.Fatalf("a failed packs' transaction left %d packs, %d objects", len(left), len(db.objects))
		}
		if failAt == 2 {
			if got := readable(t, db, dir, objects); len(left) != 3 || got != len(db.objects) || got == 0 || got == len(objects) {
				t.Fatalf("a failed part left %d packs, %d objects indexed, %d readable", len(left), len(db.objects), got)
			}
		}
	}
}

// TestCommitReadsBackTrailers: a Writer past keptTrailers reads each
// pack's table back at its Commit; a table damaged in between fails the
// commit, and nothing of that pack is indexed.
func TestCommitReadsBackTrailers(t *testing.T) {
	old := keptTrailers
	keptTrailers = 0
	defer func() { keptTrailers = old }()
	ctx := context.Background()
	db, dir := testDB(t)
	w, objects := partsWriter(t, dir, 6)
	if _, err := w.Commit(ctx, db, false); err != nil {
		t.Fatal(err)
	}
	if got := readable(t, db, dir, objects); got != len(objects) {
		t.Fatalf("%d of %d objects readable", got, len(objects))
	}
	db2, dir2 := testDB(t)
	w2, _ := partsWriter(t, dir2, 6)
	names, _ := dir2.names()
	for _, n := range names {
		b := dir2.packs[n]
		b[len(b)-packFooterSize-3] ^= 0xff // inside the last table entry
	}
	if _, err := w2.Commit(ctx, db2, false); err == nil || len(db2.objects) != 0 {
		t.Fatalf("commit of packs with damaged tables: %v, %d objects indexed", err, len(db2.objects))
	}
}
