package index

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/casckpt/casckpt/cas"
)

// SchemaVersion is the version of the record layout this package writes.
const SchemaVersion = 1

// ChunkerName names the chunking algorithm and its sizes. Chunk boundaries
// are part of the store format, so it is recorded at creation and checked.
const ChunkerName = "fastcdc-v1.0.0 min=16384 normal=65536 max=262144 single<=262144"

// Errors of the database layer.
var (
	// ErrCorrupt: a record does not decode.
	ErrCorrupt = errors.New("index record corrupt")
	// ErrSchema: the database was written by an incompatible version.
	ErrSchema = errors.New("incompatible store format")
	// ErrLocked: another process held the database past the timeout.
	ErrLocked = errors.New("store is busy")
	// ErrDamaged: the database file cannot be opened as one.
	ErrDamaged = errors.New("the store's database is damaged")
	// ErrNewer: the database was written by a newer casckpt (its schema
	// version is higher than SchemaVersion). It also matches ErrSchema.
	ErrNewer = errors.New("written by a newer casckpt")
)

var (
	bucketMeta      = []byte("meta")
	bucketProjects  = []byte("projects")
	bucketSnapshots = []byte("snapshots")
	bucketStatCache = []byte("statcache")

	keySchema  = []byte("schema")
	keyChunker = []byte("chunker")
)

func boltOptions(readOnly bool, timeout time.Duration) *bolt.Options {
	return &bolt.Options{
		Timeout:      timeout,
		ReadOnly:     readOnly,
		FreelistType: bolt.FreelistMapType,
	}
}

// OpenRead opens the database at path read-only, waiting up to timeout for
// a writer to finish. It returns (nil, nil) when there is no database yet.
func OpenRead(path string, timeout time.Duration) (*bolt.DB, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return open(path, true, timeout)
}

// OpenWrite opens the database at path for writing, creating it if needed,
// waiting up to timeout for other processes.
func OpenWrite(path string, timeout time.Duration) (*bolt.DB, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if err := create(path); err != nil {
			return nil, err
		}
	}
	return open(path, false, timeout)
}

func open(path string, readOnly bool, timeout time.Duration) (*bolt.DB, error) {
	db, err := bolt.Open(path, 0o600, boltOptions(readOnly, timeout))
	if err != nil {
		return nil, openError(path, err)
	}
	if err := db.View(checkSchema); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func openError(path string, err error) error {
	if errors.Is(err, berrors.ErrTimeout) {
		return fmt.Errorf("%w: another casckpt process holds %s; try again when it finishes", ErrLocked, path)
	}
	if errors.Is(err, berrors.ErrInvalid) || errors.Is(err, berrors.ErrChecksum) || errors.Is(err, berrors.ErrVersionMismatch) {
		return fmt.Errorf("%w (%s: %v); run casckpt repair, which rebuilds it from the packs", ErrDamaged, path, err)
	}
	return fmt.Errorf("open %s: %w", path, err)
}

// create makes a new database under a temporary name and renames it into
// place, so a crash never leaves a half-initialised database at path.
func create(path string) error {
	temp, err := initTemp(path, nil)
	if err == nil {
		// Another process may have created the database meanwhile: keep
		// theirs, which may already hold data.
		if err = os.Link(temp, path); errors.Is(err, fs.ErrExist) {
			err = nil
		}
	}
	os.Remove(temp)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return cas.SyncDir(filepath.Dir(path))
}

// initTemp makes a new, initialised database beside path under a temporary
// name, runs fill (if not nil) in its first transaction, and returns its
// name.
func initTemp(path string, fill func(tx *bolt.Tx) error) (string, error) {
	var suffix [8]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return "", err
	}
	temp := path + ".tmp-" + hex.EncodeToString(suffix[:])
	db, err := bolt.Open(temp, 0o600, boltOptions(false, time.Second))
	if err != nil {
		return "", fmt.Errorf("create %s: %w", temp, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketMeta, bucketProjects, bucketSnapshots, bucketStatCache} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		if err := meta.Put(keySchema, binary.BigEndian.AppendUint32(nil, SchemaVersion)); err != nil {
			return err
		}
		if err := meta.Put(keyChunker, []byte(ChunkerName)); err != nil {
			return err
		}
		if err := cas.CreateBuckets(tx); err != nil {
			return err
		}
		if fill != nil {
			return fill(tx)
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(temp)
		return "", err
	}
	return temp, nil
}

// Rebuild replaces the database at path with a new one that fill writes.
// The old database, if any, is kept beside it under the returned name. At
// every moment path holds a whole database, the old or the new. The caller
// must keep every other process out (the store's exclusive lock).
func Rebuild(path string, now time.Time, fill func(tx *bolt.Tx) error) (kept string, err error) {
	temp, err := initTemp(path, fill)
	if err != nil {
		return "", fmt.Errorf("rebuild %s: %w", path, err)
	}
	defer os.Remove(temp)
	if _, err := os.Stat(path); err == nil {
		kept = path + ".old-" + now.UTC().Format("20060102T150405.000000000Z")
		if err := os.Link(path, kept); err != nil {
			return "", fmt.Errorf("rebuild %s: keep the old database: %w", path, err)
		}
	}
	if err := os.Rename(temp, path); err != nil {
		if kept != "" {
			os.Remove(kept)
		}
		return "", fmt.Errorf("rebuild %s: %w", path, err)
	}
	return kept, cas.SyncDir(filepath.Dir(path))
}

func checkSchema(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return fmt.Errorf("%w: no meta bucket", ErrSchema)
	}
	v := meta.Get(keySchema)
	if len(v) == 4 && binary.BigEndian.Uint32(v) > SchemaVersion {
		return fmt.Errorf("%w: %w (schema %d, this casckpt reads %d); upgrade casckpt", ErrSchema, ErrNewer, binary.BigEndian.Uint32(v), SchemaVersion)
	}
	if len(v) != 4 || binary.BigEndian.Uint32(v) != SchemaVersion {
		return fmt.Errorf("%w: schema %x, this casckpt reads %d; upgrade casckpt", ErrSchema, v, SchemaVersion)
	}
	if c := meta.Get(keyChunker); string(c) != ChunkerName {
		return fmt.Errorf("%w: chunker %q, this casckpt uses %q", ErrSchema, c, ChunkerName)
	}
	return nil
}

// GetMeta returns a store-wide setting, or nil.
func GetMeta(tx *bolt.Tx, key string) []byte {
	b := tx.Bucket(bucketMeta)
	if b == nil {
		return nil
	}
	return b.Get([]byte("x." + key))
}

// PutMeta stores a store-wide setting.
func PutMeta(tx *bolt.Tx, key string, value []byte) error {
	return tx.Bucket(bucketMeta).Put([]byte("x."+key), value)
}
