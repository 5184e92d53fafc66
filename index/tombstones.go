package index

import (
	"fmt"

	"github.com/casckpt/casckpt/cas"
)

// bucketTombstones maps the record backup of a deleted snapshot or turn to
// the pack it was seen in ("dropped" in stores written before the name
// changed).
var bucketTombstones = []byte("dropped")

// addTombstone notes that the record whose backup is backup (none: zero)
// was deleted, so that a repair does not bring it back from its backup
// while the backup is still in a pack.
func (t *Tx) addTombstone(backup cas.ID) error {
	if backup.IsZero() {
		return nil
	}
	return t.SetTombstone(backup, [16]byte{})
}

// Tombstones returns the record backups of deleted snapshots and turns
// that may still be in a pack, each with the name of the pack it was seen
// in (zero when it was not looked up yet).
func (t *Tx) Tombstones() (map[cas.ID][16]byte, error) {
	out := map[cas.ID][16]byte{}
	b := t.bucket(bucketTombstones)
	if b == nil {
		return out, nil
	}
	err := b.ForEach(func(k, v []byte) error {
		if len(k) != cas.IDSize || (len(v) != 0 && len(v) != 16) {
			return fmt.Errorf("%w: tombstone", ErrCorrupt)
		}
		var pack [16]byte
		copy(pack[:], v)
		out[cas.ID(k)] = pack
		return nil
	})
	return out, err
}

// SetTombstone notes that backup id, of a deleted snapshot or turn, is in
// the named pack (zero: not looked up yet).
func (t *Tx) SetTombstone(id cas.ID, pack [16]byte) error {
	b, err := t.tx.CreateBucketIfNotExists(bucketTombstones)
	if err != nil {
		return err
	}
	var v []byte
	if pack != ([16]byte{}) {
		v = pack[:]
	}
	return b.Put(id[:], v)
}

// DeleteTombstone drops the tombstone of backup id: no pack holds it any
// more.
func (t *Tx) DeleteTombstone(id cas.ID) error {
	if b := t.bucket(bucketTombstones); b != nil {
		return b.Delete(id[:])
	}
	return nil
}
