package index

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/casckpt/casckpt/cas"
)

// RacyWindow is how close to a scan's start a file's mtime or ctime may be
// before its stat cache entry is not trusted. It covers coarse file system
// clocks (FAT keeps 2-second mtimes) and the kernel's lagging timestamp tick.
const RacyWindow = 2 * time.Second

// StatEntry is what the stat cache knows of one file.
type StatEntry struct {
	Size     int64
	Mtime    int64 // ns since the epoch
	Ctime    int64 // ns since the epoch
	Inode    uint64
	Mode     uint32 // the full st_mode
	Recorded int64  // ns since the epoch: the start of the scan that hashed it
	Lines    int64  // the content's line count (manifest.CountLines)
	Binary   bool   // the content looks binary
	Chunks   []cas.ID
}

// Matches reports whether the file's current metadata equals the entry's.
func (e StatEntry) Matches(cur StatEntry) bool {
	return e.Size == cur.Size && e.Mtime == cur.Mtime && e.Ctime == cur.Ctime &&
		e.Inode == cur.Inode && e.Mode == cur.Mode
}

// Trusted reports whether the entry may stand for the file's content without
// reading it: unless the file was modified within RacyWindow of the scan
// that recorded it, an edit in the same timestamp tick would leave every
// stat field unchanged (git's "racily clean" problem), so such entries are
// re-hashed.
func (e StatEntry) Trusted() bool {
	limit := e.Recorded - int64(RacyWindow)
	return e.Mtime < limit && e.Ctime < limit
}

// EncodeStatEntry returns the stored form of e.
func EncodeStatEntry(e StatEntry) []byte {
	b := make([]byte, 0, 40+len(e.Chunks)*cas.IDSize)
	b = append(b, recordVersion)
	b = binary.AppendUvarint(b, uint64(e.Size))
	b = binary.AppendVarint(b, e.Mtime)
	b = binary.AppendVarint(b, e.Ctime)
	b = binary.AppendUvarint(b, e.Inode)
	b = binary.AppendUvarint(b, uint64(e.Mode))
	b = binary.AppendVarint(b, e.Recorded)
	b = binary.AppendUvarint(b, uint64(e.Lines))
	if e.Binary {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(e.Chunks)))
	for _, c := range e.Chunks {
		b = append(b, c[:]...)
	}
	return b
}

// DecodeStatEntry parses a stat cache entry.
func DecodeStatEntry(v []byte) (StatEntry, error) {
	r := reader{b: v}
	if r.byte() != recordVersion {
		return StatEntry{}, fmt.Errorf("%w: stat entry: unknown version", ErrCorrupt)
	}
	e := StatEntry{
		Size:  int64(r.uvarint()),
		Mtime: r.varint(),
		Ctime: r.varint(),
		Inode: r.uvarint(),
	}
	mode := r.uvarint()
	if mode > 1<<32-1 {
		r.fail("bad mode")
	}
	e.Mode = uint32(mode)
	e.Recorded = r.varint()
	e.Lines = int64(r.uvarint())
	switch r.byte() {
	case 0:
	case 1:
		e.Binary = true
	default:
		r.fail("bad binary flag")
	}
	n := r.uvarint()
	if n > uint64(len(r.b))/cas.IDSize {
		r.fail("chunk count too large")
	} else if n > 0 {
		e.Chunks = make([]cas.ID, n)
		for i := range e.Chunks {
			e.Chunks[i] = r.id()
		}
	}
	return e, r.done()
}

// LoadStatCache returns a project's stat cache. Undecodable entries are
// left out (the file is then simply hashed again).
func LoadStatCache(tx *bolt.Tx, workdir string) map[string]StatEntry {
	out := map[string]StatEntry{}
	root := tx.Bucket(bucketStatCache)
	if root == nil {
		return out
	}
	b := root.Bucket([]byte(workdir))
	if b == nil {
		return out
	}
	_ = b.ForEach(func(k, v []byte) error {
		if e, err := DecodeStatEntry(v); err == nil {
			out[string(k)] = e
		}
		return nil
	})
	return out
}

// UpdateStatCache stores changed entries and removes those of vanished paths.
func UpdateStatCache(tx *bolt.Tx, workdir string, put map[string]StatEntry, remove []string) error {
	if len(put) == 0 && len(remove) == 0 {
		return nil
	}
	b, err := tx.Bucket(bucketStatCache).CreateBucketIfNotExists([]byte(workdir))
	if err != nil {
		return err
	}
	// Paths arrive mostly in order and are rarely rewritten: fill pages up
	// rather than splitting them half empty (bbolt's default).
	b.FillPercent = 0.95
	for _, p := range remove {
		if err := b.Delete([]byte(p)); err != nil {
			return err
		}
	}
	for _, p := range slices.Sorted(maps.Keys(put)) {
		if err := b.Put([]byte(p), EncodeStatEntry(put[p])); err != nil {
			return err
		}
	}
	return nil
}

// DropStatEntries removes, in every project, the stat cache entries that
// refer to a chunk for which gone returns true. Garbage collection calls it
// before deleting objects, so no cache entry outlives its data.
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
			e, err := DecodeStatEntry(v)
			stale := err != nil
			for _, c := range e.Chunks {
				stale = stale || gone(c)
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
