package cas

import (
	"context"
	"errors"
)

// batchState is what a Writer committed ahead of its Commit.
type batchState struct {
	indexed []PackInfo // the packs of the batches committed
	// open is the number of packs, first of finished, that the last
	// CommitBatch recorded in a transaction not known to be committed
	// yet, and infos their records.
	open  int
	infos []PackInfo
}

// Uncommitted returns the number of objects in the flushed packs not
// committed yet (see CommitBatch).
func (w *Writer) Uncommitted() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, p := range w.finished {
		n += trailerCount(p.trailer)
	}
	return n
}

// trailerCount is the number of entries of a pack's trailer.
func trailerCount(trailer []byte) int {
	return (len(trailer) - packFooterSize) / tableEntrySize
}

// CommitBatch records in the object index of the caller's write
// transaction, as Commit does, the first of the flushed packs not
// committed yet: at least one, and as many more as keep the batch at
// most maxObjects objects. It lets a big write commit its objects in
// several small transactions before the one that commits what refers to
// them (those objects are garbage, and collected, until it does). Once
// the transaction is committed, call BatchCommitted, which drops the
// batch's entries from memory and leaves its packs to the index: Abort
// no longer removes them. If the transaction fails, call Abort. It
// returns the number of objects recorded (0: nothing was left).
func (w *Writer) CommitBatch(ctx context.Context, idx IndexWriter, replace bool, maxObjects int) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur != nil || w.open != [2]*openBlock{} || w.err != nil || w.batch.open > 0 {
		return 0, errors.New("cas: CommitBatch before a successful Flush or BatchCommitted")
	}
	n, objects := 0, 0
	for _, p := range w.finished {
		c := trailerCount(p.trailer)
		if n > 0 && objects+c > maxObjects {
			break
		}
		n, objects = n+1, objects+c
	}
	if n == 0 {
		return 0, nil
	}
	if err := w.checkStored(ctx, w.finished[:n]); err != nil {
		return 0, err
	}
	infos, err := w.indexPacksLocked(idx, w.finished[:n], replace)
	if err != nil {
		return 0, err
	}
	w.batch.open, w.batch.infos = n, infos
	return objects, nil
}

// BatchCommitted says that the transaction of the last CommitBatch is
// committed: its packs and objects are the index's now.
func (w *Writer) BatchCommitted() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.finished[:w.batch.open] {
		if entries, err := DecodeTrailer(p.trailer, p.size); err == nil {
			for _, e := range entries {
				delete(w.pending, e.ID)
			}
		}
	}
	w.finished = append(w.finished[:0:0], w.finished[w.batch.open:]...)
	w.batch.indexed = append(w.batch.indexed, w.batch.infos...)
	w.batch.open, w.batch.infos = 0, nil
}
