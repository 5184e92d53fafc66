package index

import (
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/casckpt/casckpt/cas"
	bolt "go.etcd.io/bbolt"
)

// Tx is a transaction of the database, given to the function that View,
// Update or DryRun runs. Its accessors read and write typed records; every
// byte encoding stays in this package. A Tx of a database that does not
// exist yet reads as empty. Methods are called from fn's goroutine, except
// those of Objects, which are safe for concurrent use. A Tx must not be
// used after fn returns.
type Tx struct {
	mu sync.Mutex // serialises bbolt access: a Tx is not goroutine-safe
	tx *bolt.Tx   // nil: no database yet
	// added are the packs AddPack recorded in this transaction.
	added []cas.PackInfo
}

// bucket returns a top-level bucket, or nil.
func (t *Tx) bucket(name []byte) *bolt.Bucket {
	if t.tx == nil {
		return nil
	}
	return t.tx.Bucket(name)
}

// projectBucket returns project workdir's bucket inside top-level bucket
// name, or nil.
func (t *Tx) projectBucket(name []byte, workdir string) *bolt.Bucket {
	if root := t.bucket(name); root != nil {
		return root.Bucket([]byte(workdir))
	}
	return nil
}

// get reads key of a top-level bucket; nil when either is missing.
func (t *Tx) get(bucket, key []byte) []byte {
	if b := t.bucket(bucket); b != nil {
		return b.Get(key)
	}
	return nil
}

// Meta keys of store-wide settings.
var (
	keyPendingDrops = []byte("x.gc.pending") // snapshots dropped since the last collection
	keyLastPrune    = []byte("x.prune.last")
)

// PendingDrops counts the snapshots dropped since the last collection.
func (t *Tx) PendingDrops() uint64 {
	v, _ := binary.Uvarint(t.get(bucketMeta, keyPendingDrops))
	return v
}

// AddPendingDrops counts n more snapshots dropped without collecting.
func (t *Tx) AddPendingDrops(n int) error {
	if n == 0 {
		return nil
	}
	return t.tx.Bucket(bucketMeta).Put(keyPendingDrops, binary.AppendUvarint(nil, t.PendingDrops()+uint64(n)))
}

// ClearPendingDrops records that a collection ran.
func (t *Tx) ClearPendingDrops() error {
	return t.tx.Bucket(bucketMeta).Delete(keyPendingDrops)
}

// LastPrune is when a prune last ran (zero: never).
func (t *Tx) LastPrune() time.Time {
	v := t.get(bucketMeta, keyLastPrune)
	if len(v) != 8 {
		return time.Time{}
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(v)))
}

// SetLastPrune records when a prune ran.
func (t *Tx) SetLastPrune(at time.Time) error {
	return t.tx.Bucket(bucketMeta).Put(keyLastPrune, binary.BigEndian.AppendUint64(nil, uint64(at.UnixNano())))
}

// Schema returns the schema version the database records (SchemaBase for a
// database that does not exist yet).
func (t *Tx) Schema() uint32 {
	if v := t.get(bucketMeta, keySchema); len(v) == 4 {
		return binary.BigEndian.Uint32(v)
	}
	return SchemaBase
}

// RequireSchema raises the database's schema version to v, if it records
// a lower one, before the transaction stores what needs v: once it
// commits, a casckpt that reads only older versions refuses the store.
// Call it in the write transaction that first stores such a thing.
func (t *Tx) RequireSchema(v uint32) error {
	if v > SchemaVersion {
		return fmt.Errorf("%w: schema %d is newer than this casckpt's %d", ErrSchema, v, SchemaVersion)
	}
	if t.Schema() >= v {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tx.Bucket(bucketMeta).Put(keySchema, binary.BigEndian.AppendUint32(nil, v))
}
