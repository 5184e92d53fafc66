package index

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/casckpt/casckpt/cas"
)

// bucketCounts caches change counts: the key is the pair of tree IDs
// (from, to), the value what changed from the one to the other. Counts
// depend on the two trees only, so an entry is right as long as both
// exist; garbage collection drops it with either (DropChangeCounts).
var bucketCounts = []byte("counts")

// Counts is the change from one tree to another: files changed, lines
// inserted and deleted.
type Counts struct {
	Files, Insertions, Deletions int64
}

// countsKey is the key of the counts from tree from to tree to.
func countsKey(from, to cas.ID) []byte {
	k := make([]byte, 0, 2*cas.IDSize)
	k = append(k, from[:]...)
	return append(k, to[:]...)
}

// encodeCounts returns the stored form of c.
func encodeCounts(c Counts) []byte {
	b := []byte{recordVersion}
	b = binary.AppendUvarint(b, uint64(c.Files))
	b = binary.AppendUvarint(b, uint64(c.Insertions))
	return binary.AppendUvarint(b, uint64(c.Deletions))
}

// decodeCounts parses a counts record.
func decodeCounts(v []byte) (Counts, error) {
	r := reader{b: v}
	if r.byte() != recordVersion {
		return Counts{}, fmt.Errorf("%w: counts record: unknown version", ErrCorrupt)
	}
	var n [3]uint64
	for i := range n {
		if n[i] = r.uvarint(); n[i] > 1<<62 {
			r.fail("count too large")
		}
	}
	if err := r.done(); err != nil {
		return Counts{}, err
	}
	return Counts{Files: int64(n[0]), Insertions: int64(n[1]), Deletions: int64(n[2])}, nil
}

// ChangeCounts returns the cached counts from tree from to tree to, and
// whether there are any. An undecodable record reads as none: the counts
// are simply computed again.
func (t *Tx) ChangeCounts(from, to cas.ID) (Counts, bool) {
	v := t.get(bucketCounts, countsKey(from, to))
	if v == nil {
		return Counts{}, false
	}
	c, err := decodeCounts(v)
	return c, err == nil
}

// PutChangeCounts caches the counts from tree from to tree to. The caller
// vouches that both trees are in the store and whole.
func (t *Tx) PutChangeCounts(from, to cas.ID, c Counts) error {
	if c.Files < 0 || c.Insertions < 0 || c.Deletions < 0 {
		return fmt.Errorf("negative change counts %+v; this is a bug", c)
	}
	b, err := t.tx.CreateBucketIfNotExists(bucketCounts)
	if err != nil {
		return err
	}
	return b.Put(countsKey(from, to), encodeCounts(c))
}

// DropChangeCounts removes the cached counts from or to a tree that gone
// reports deleted, and undecodable ones. Garbage collection calls it before
// deleting objects, so no entry outlives its trees. keep names a tree that
// is never stored yet always there (the empty tree).
func (t *Tx) DropChangeCounts(gone func(cas.ID) bool, keep cas.ID) (int, error) {
	b := t.bucket(bucketCounts)
	if b == nil {
		return 0, nil
	}
	goneID := func(id cas.ID) bool { return id != keep && gone(id) }
	var dead [][]byte
	err := b.ForEach(func(k, v []byte) error {
		_, err := decodeCounts(v)
		if err != nil || len(k) != 2*cas.IDSize || goneID(cas.ID(k[:cas.IDSize])) || goneID(cas.ID(k[cas.IDSize:])) {
			dead = append(dead, append([]byte(nil), k...))
		}
		return nil
	})
	for _, k := range dead {
		if err == nil {
			err = b.Delete(k)
		}
	}
	return len(dead), err
}

// TryUpdate is Update when the database is free now: it never waits for
// another process's transaction, and fails with ErrBusy instead. It is
// for writes that may be skipped, such as caches. A missing database is
// not made: TryUpdate then returns ErrBusy too.
func (d *DB) TryUpdate(fn func(*Tx) error) error {
	if !d.Exists() {
		return fmt.Errorf("%w: no database at %s yet", ErrBusy, d.path)
	}
	try := *d
	try.opts.Timeout = time.Nanosecond // bbolt tries the file lock once
	return guard(func() error { return try.update(fn, false) })
}
