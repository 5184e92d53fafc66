package index

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/internal/statcache"
)

// bucketStatCache holds a bucket per project, with a record per directory.
var bucketStatCache = []byte("statcache")

// encodeDir returns the stored form of d.
func encodeDir(d statcache.Dir) []byte {
	b := make([]byte, 0, 48+len(d.Stamps)*8+len(d.Subtrees)*cas.IDSize)
	b = append(b, recordVersion)
	b = append(b, d.Tree[:]...)
	b = binary.LittleEndian.AppendUint64(b, d.Names)
	b = binary.AppendUvarint(b, uint64(len(d.Stamps)))
	for _, st := range d.Stamps {
		b = binary.LittleEndian.AppendUint64(b, st)
	}
	b = binary.AppendUvarint(b, uint64(len(d.Subtrees)))
	for _, t := range d.Subtrees {
		b = append(b, t[:]...)
	}
	return b
}

// decodeDir parses a stat cache record.
func decodeDir(v []byte) (statcache.Dir, error) {
	r := reader{b: v}
	if r.byte() != recordVersion {
		return statcache.Dir{}, fmt.Errorf("%w: stat cache record: unknown version", ErrCorrupt)
	}
	d := statcache.Dir{Tree: r.id()}
	if b := r.bytes(8); len(b) == 8 {
		d.Names = binary.LittleEndian.Uint64(b)
	}
	n := r.uvarint()
	if n > uint64(len(r.b))/8 {
		r.fail("stamp count too large")
		n = 0
	}
	if n > 0 {
		d.Stamps = make([]uint64, 0, n)
	}
	for range n {
		if b := r.bytes(8); len(b) == 8 {
			d.Stamps = append(d.Stamps, binary.LittleEndian.Uint64(b))
		}
	}
	m := r.uvarint()
	if m > uint64(len(r.b))/cas.IDSize || m > n {
		r.fail("subtree count too large")
		m = 0
	}
	if m > 0 {
		d.Subtrees = make([]cas.ID, 0, m)
	}
	for range m {
		d.Subtrees = append(d.Subtrees, r.id())
	}
	return d, r.done()
}

// StatCache returns a project's stat cache by directory path ("" is the
// root). Undecodable records are left out: those directories are simply
// scanned afresh.
func (t *Tx) StatCache(workdir string) map[string]statcache.Dir {
	out := map[string]statcache.Dir{}
	b := t.projectBucket(bucketStatCache, workdir)
	if b == nil {
		return out
	}
	_ = b.ForEach(func(k, v []byte) error {
		if d, err := decodeDir(v); err == nil {
			out[string(k[1:])] = d
		}
		return nil
	})
	return out
}

// dirKey prefixes a directory path so that the root ("") is a valid key.
func dirKey(dir string) []byte { return append([]byte{'/'}, dir...) }

// UpdateStatCache stores changed directory records and removes those of
// directories no longer scanned.
func (t *Tx) UpdateStatCache(workdir string, put map[string]statcache.Dir, remove []string) error {
	if len(put) == 0 && len(remove) == 0 {
		return nil
	}
	b, err := t.tx.Bucket(bucketStatCache).CreateBucketIfNotExists([]byte(workdir))
	if err != nil {
		return err
	}
	b.FillPercent = 0.95 // records are rewritten in place, rarely split
	for _, d := range remove {
		if err := b.Delete(dirKey(d)); err != nil {
			return err
		}
	}
	for _, d := range slices.Sorted(maps.Keys(put)) {
		if err := b.Put(dirKey(d), encodeDir(put[d])); err != nil {
			return err
		}
	}
	return nil
}

// DropStatEntries removes, in every project, the stat cache records whose
// tree (or a subdirectory's) gone reports deleted. Garbage collection calls
// it before deleting objects, so no record outlives its data: a live tree
// keeps every chunk and subtree it names alive.
func (t *Tx) DropStatEntries(gone func(cas.ID) bool) (int, error) {
	root := t.bucket(bucketStatCache)
	if root == nil {
		return 0, nil
	}
	dropped := 0
	err := root.ForEachBucket(func(name []byte) error {
		b := root.Bucket(name)
		var dead [][]byte
		err := b.ForEach(func(k, v []byte) error {
			d, err := decodeDir(v)
			stale := err != nil || gone(d.Tree)
			for _, t := range d.Subtrees {
				stale = stale || gone(t)
			}
			if stale {
				dead = append(dead, append([]byte(nil), k...))
			}
			return nil
		})
		for _, k := range dead {
			if err == nil {
				err = b.Delete(k)
			}
		}
		dropped += len(dead)
		return err
	})
	return dropped, err
}
