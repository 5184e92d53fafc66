package index

import (
	"fmt"

	"github.com/casckpt/casckpt/cas"
)

var bucketOrigins = []byte("origins")

// Origin returns the snapshot recorded for an import origin (see PutOrigin).
func (t *Tx) Origin(origin string) (cas.ID, bool) {
	v := t.get(bucketOrigins, []byte(origin))
	if len(v) != cas.IDSize {
		return cas.ID{}, false
	}
	return cas.ID(v), true
}

// PutOrigin records that origin (a source such as a migrated commit) was
// imported as snapshot id. Origins outlive their snapshots, so an import
// is never repeated.
func (t *Tx) PutOrigin(origin string, id cas.ID) error {
	b, err := t.tx.CreateBucketIfNotExists(bucketOrigins)
	if err != nil {
		return err
	}
	return b.Put([]byte(origin), id[:])
}

// Origins returns every import origin recorded, with its snapshot.
func (t *Tx) Origins() (map[string]cas.ID, error) {
	out := map[string]cas.ID{}
	b := t.bucket(bucketOrigins)
	if b == nil {
		return out, nil
	}
	err := b.ForEach(func(k, v []byte) error {
		if len(v) != cas.IDSize {
			return fmt.Errorf("%w: origin %q", ErrCorrupt, k)
		}
		out[string(k)] = cas.ID(v)
		return nil
	})
	return out, err
}
