package cas

import (
	"context"
	"math/rand/v2"
	"testing"
)

// batchWriter returns a Writer holding, flushed, objects of 3 MiB each that
// do not compress, three to a pack.
func batchWriter(t *testing.T, dir *memPacks, n int) (*Writer, [][]byte) {
	t.Helper()
	ctx := context.Background()
	w := NewWriter(dir, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	var objects [][]byte
	for range n {
		o := make([]byte, 3<<20)
		for i := range o {
			o[i] = byte(rng.Uint32())
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

// TestCommitBatchThenCommit: a Writer's packs committed in batches of one
// pack, then the rest by Commit, which returns every pack's record; all
// objects read back, and the Writer takes no more Puts.
func TestCommitBatchThenCommit(t *testing.T) {
	db, dir := testDB(t)
	ctx := context.Background()
	w, objects := batchWriter(t, dir, 6)
	if got := w.Uncommitted(); got != 6 {
		t.Fatalf("Uncommitted = %d, want 6", got)
	}
	n, err := w.CommitBatch(ctx, db, false, 1)
	if err != nil || n != 3 {
		t.Fatalf("first batch: %d objects, %v; want one pack of 3", n, err)
	}
	w.BatchCommitted()
	if got := w.Uncommitted(); got != 3 {
		t.Fatalf("Uncommitted after a batch = %d, want 3", got)
	}
	if got := readable(t, db, dir, objects); got != 3 {
		t.Fatalf("%d objects readable after one batch, want 3", got)
	}
	if _, err := w.Put(ctx, KindChunk, []byte("late")); err == nil {
		t.Fatal("a Put after CommitBatch was taken")
	}
	infos, err := w.Commit(ctx, db, false)
	if err != nil || len(infos) != 2 {
		t.Fatalf("Commit: %d packs, %v; want both packs", len(infos), err)
	}
	if got := readable(t, db, dir, objects); got != 6 {
		t.Fatalf("%d objects readable after the commit, want 6", got)
	}
}

// TestAbortKeepsCommittedBatches: Abort after a committed batch removes
// only the packs no committed transaction indexed, and the packs of a
// batch whose transaction failed (BatchCommitted not called).
func TestAbortKeepsCommittedBatches(t *testing.T) {
	db, dir := testDB(t)
	ctx := context.Background()
	w, objects := batchWriter(t, dir, 6)
	if _, err := w.CommitBatch(ctx, db, false, 1); err != nil {
		t.Fatal(err)
	}
	w.BatchCommitted()
	if _, err := w.CommitBatch(ctx, newMemIndex(), false, 1); err != nil { // a transaction rolled back
		t.Fatal(err)
	}
	if _, err := w.CommitBatch(ctx, db, false, 1); err == nil {
		t.Fatal("a CommitBatch before BatchCommitted was taken")
	}
	w.Abort()
	if left, _ := dir.names(); len(left) != 1 {
		t.Fatalf("abort left %d packs, want the committed batch's one", len(left))
	}
	if got := readable(t, db, dir, objects); got != 3 {
		t.Fatalf("%d objects readable after the abort, want the batch's 3", got)
	}
}
