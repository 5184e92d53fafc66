package index

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/casckpt/casckpt/cas"
	bolt "go.etcd.io/bbolt"
)

// compactMinSize is the size (as far as its pages reach) below which a
// database is never compacted: its free pages cost less than the copy.
const compactMinSize = 256 << 10

// Compact rewrites the database without its free pages when they take at
// least a third of the file as far as its pages reach, and reports whether
// it did. bbolt never returns a page to the file system: a store whose
// records turn over (keep N, collections) keeps a file two to three times
// the size of its data (W3 after 40 turns: 616 KiB holding 190 KiB). The
// copy, written and synced under a temporary name, replaces the database
// with a rename: at every moment the path holds a whole database. Because
// free pages must have grown to the size of the data again before the
// next copy, copying costs a constant share of the writes that made
// them. The caller must keep every other process out (the store's
// exclusive lock), as for Rebuild.
func (d *DB) Compact() (compacted bool, err error) {
	err = guard(func() error {
		if !d.Exists() {
			return nil
		}
		d.removeLeftovers()
		src, err := d.open(false)
		if err != nil {
			return err
		}
		defer src.Close()
		var reach int64
		if err := src.View(func(tx *bolt.Tx) error { reach = tx.Size(); return nil }); err != nil {
			return err
		}
		free := int64(src.Stats().FreePageN) * int64(src.Info().PageSize)
		if reach < compactMinSize || 3*free < reach {
			return nil
		}
		temp, err := d.compactTo(src)
		if err != nil {
			return fmt.Errorf("compact %s: %w", d.path, err)
		}
		if err := os.Rename(temp, d.path); err != nil {
			os.Remove(temp)
			return fmt.Errorf("compact %s: %w", d.path, err)
		}
		compacted = true
		return cas.SyncDir(filepath.Dir(d.path))
	})
	return compacted, err
}

// compactTo copies src into a new database beside the path, synced, and
// returns its name.
func (d *DB) compactTo(src *bolt.DB) (string, error) {
	dst, temp, err := d.openTemp()
	if err != nil {
		return "", err
	}
	err = dst.Update(func(to *bolt.Tx) error {
		return src.View(func(from *bolt.Tx) error {
			return from.ForEach(func(name []byte, b *bolt.Bucket) error {
				nb, err := to.CreateBucket(name)
				if err != nil {
					return err
				}
				return copyBucket(nb, b)
			})
		})
	})
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if rerr := os.Remove(temp); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = fmt.Errorf("%w (and %v)", err, rerr)
		}
		return "", err
	}
	return temp, nil
}

// compactFill is how full compaction fills the copy's pages. bolt.Compact
// fills them whole, but the object index's keys are hashes, spread over
// every page: after such a copy nearly each insert lands in a full page and
// splits it, one new page an object, and W3's turns (ten objects each) grew
// a copy of 232 KiB back to 432 KiB within a few turns. Pages three
// quarters full take the next inserts in place.
const compactFill = 0.75

// copyBucket copies bucket src, with its sequence and nested buckets, into
// the new bucket dst, filling its pages to compactFill.
func copyBucket(dst, src *bolt.Bucket) error {
	dst.FillPercent = compactFill
	if err := dst.SetSequence(src.Sequence()); err != nil {
		return err
	}
	return src.ForEach(func(k, v []byte) error {
		if v != nil {
			return dst.Put(k, v)
		}
		nb, err := dst.CreateBucket(k)
		if err != nil {
			return err
		}
		return copyBucket(nb, src.Bucket(k))
	})
}
