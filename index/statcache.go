package index

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/zeebo/blake3"
	bolt "go.etcd.io/bbolt"

	"github.com/casckpt/casckpt/cas"
)

// RacyWindow is how close to a scan's start a file's mtime or ctime may be
// before its stat cache entry is not trusted. It covers coarse file system
// clocks (FAT keeps 2-second mtimes) and the kernel's lagging timestamp tick.
const RacyWindow = 2 * time.Second

// The stat cache keeps one record per directory of a project: the tree the
// directory had at the last scan, a hash of its entries' names and kinds,
// a stamp per entry and the tree of each subdirectory. Names are not
// stored: while the names hash matches, entries line up with the stamps by
// position; otherwise the cached tree, which holds the names, is read. A
// file whose stamp is unchanged takes its chunks from that tree without
// being read; a directory whose names, stamps and subtrees are all
// unchanged is that tree, without being encoded again.

// DirCache is the stat cache record of one directory.
type DirCache struct {
	Tree  cas.ID // the directory's tree at the scan that recorded it
	Names uint64 // NamesHash of its entries
	// Stamps has one stamp per entry of Tree, in order: for a file its
	// FileStamp when hashed, for a symbolic link its LinkStamp, 0 for a
	// directory.
	Stamps []uint64
	// Subtrees has the tree of each subdirectory, in order.
	Subtrees []cas.ID
}

// NamesHash condenses the names and kinds of a directory's entries, in
// order.
func NamesHash(names []string, kinds []uint8) uint64 {
	h := blake3.New()
	var b []byte
	for i, n := range names {
		b = binary.AppendUvarint(b[:0], uint64(len(n)))
		b = append(b, n...)
		b = append(b, kinds[i])
		_, _ = h.Write(b)
	}
	var sum [8]byte
	_, _ = h.Digest().Read(sum[:])
	return binary.LittleEndian.Uint64(sum[:])
}

// FileStamp condenses a file's size, mtime, ctime, inode and mode into 64
// bits, the lowest of which says whether the entry may be trusted: it is
// clear when the file was modified within RacyWindow of the scan that read
// it (scanStart, ns), since an edit in the same timestamp tick would leave
// every field unchanged (git's "racily clean" problem). An untrusted stamp
// never equals a fresh one, so such files are read again.
func FileStamp(size, mtime, ctime int64, inode uint64, mode uint32, scanStart int64) uint64 {
	var b [36]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(size))
	binary.LittleEndian.PutUint64(b[8:], uint64(mtime))
	binary.LittleEndian.PutUint64(b[16:], uint64(ctime))
	binary.LittleEndian.PutUint64(b[24:], inode)
	binary.LittleEndian.PutUint32(b[32:], mode)
	sum := blake3.Sum256(b[:])
	stamp := binary.LittleEndian.Uint64(sum[:]) &^ 1
	limit := scanStart - int64(RacyWindow)
	if mtime < limit && ctime < limit {
		stamp |= 1
	}
	return stamp
}

// CurrentStamp is the stamp a file's metadata must match now: as if
// recorded by a scan long after.
func CurrentStamp(size, mtime, ctime int64, inode uint64, mode uint32) uint64 {
	return FileStamp(size, mtime, ctime, inode, mode, 1<<62)
}

// LinkStamp condenses a symbolic link's target.
func LinkStamp(target string) uint64 {
	sum := blake3.Sum256([]byte(target))
	return binary.LittleEndian.Uint64(sum[:])
}

// EncodeDirCache returns the stored form of d.
func EncodeDirCache(d DirCache) []byte {
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

// DecodeDirCache parses a stat cache record.
func DecodeDirCache(v []byte) (DirCache, error) {
	r := reader{b: v}
	if r.byte() != recordVersion {
		return DirCache{}, fmt.Errorf("%w: stat cache record: unknown version", ErrCorrupt)
	}
	d := DirCache{Tree: r.id()}
	if b := r.bytes(8); len(b) == 8 {
		d.Names = binary.LittleEndian.Uint64(b)
	}
	n := r.uvarint()
	if n > uint64(len(r.b))/8 {
		r.fail("stamp count too large")
		n = 0
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
	for range m {
		d.Subtrees = append(d.Subtrees, r.id())
	}
	return d, r.done()
}

// LoadStatCache returns a project's stat cache by directory path ("" is the
// root). Undecodable records are left out: those directories are simply
// scanned afresh.
func LoadStatCache(tx *bolt.Tx, workdir string) map[string]DirCache {
	out := map[string]DirCache{}
	root := tx.Bucket(bucketStatCache)
	if root == nil {
		return out
	}
	b := root.Bucket([]byte(workdir))
	if b == nil {
		return out
	}
	_ = b.ForEach(func(k, v []byte) error {
		if d, err := DecodeDirCache(v); err == nil {
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
func UpdateStatCache(tx *bolt.Tx, workdir string, put map[string]DirCache, remove []string) error {
	if len(put) == 0 && len(remove) == 0 {
		return nil
	}
	b, err := tx.Bucket(bucketStatCache).CreateBucketIfNotExists([]byte(workdir))
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
		if err := b.Put(dirKey(d), EncodeDirCache(put[d])); err != nil {
			return err
		}
	}
	return nil
}

// DropStatEntries removes, in every project, the stat cache records whose
// tree (or a subdirectory's) gone reports deleted. Garbage collection calls
// it before deleting objects, so no record outlives its data: a live tree
// keeps every chunk and subtree it names alive.
func DropStatEntries(tx *bolt.Tx, gone func(cas.ID) bool) (int, error) {
	root := tx.Bucket(bucketStatCache)
	if root == nil {
		return 0, nil
	}
	dropped := 0
	err := root.ForEachBucket(func(name []byte) error {
		b := root.Bucket(name)
		var dead [][]byte
		err := b.ForEach(func(k, v []byte) error {
			d, err := DecodeDirCache(v)
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
