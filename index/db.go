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
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/casckpt/casckpt/cas"
)

// Schema versions. A database records the lowest version that reads all
// it holds: a new one is made at SchemaBase, and a write that stores what
// an older casckpt would misread raises it first (Tx.RequireSchema), so
// that older binaries refuse the store ("upgrade casckpt") instead of
// reading it wrongly or collecting what they do not understand.
const (
	// SchemaBase: the record layout of casckpt's first stores.
	SchemaBase = 1
	// SchemaInline: packs may live in the database (inline packs).
	SchemaInline = 2
	// SchemaInlinePieces: an inline pack's bytes may be stored in pieces
	// (see inlinePiece), where SchemaInline stored them as one value.
	SchemaInlinePieces = 3
	// SchemaDeltas: objects may be stored as deltas against a base
	// object (cas's pack version 3, index entries of layout v3).
	SchemaDeltas = 4
	// SchemaVersion is the highest version this package reads and writes.
	SchemaVersion = SchemaDeltas
)

var (
	bucketMeta = []byte("meta")

	keySchema  = []byte("schema")
	keyChunker = []byte("chunker")
)

// topBuckets are made when a database is created; the others on first use.
var topBuckets = [][]byte{bucketMeta, bucketProjects, bucketSnapshots, bucketStatCache, bucketObjects, bucketPacks}

// CommitHook, when set, is called with the database's path when a write
// transaction is about to commit, its function having succeeded; an error
// it returns fails the transaction, which then commits nothing. Tests
// inject faults and kills into the commit with it.
var CommitHook func(path string) error

// Options configure a DB.
type Options struct {
	// Timeout bounds the wait for another process's write transaction.
	Timeout time.Duration
	// Chunker names the chunking the store's content is cut with. It is
	// recorded when the database is made; a database that records another
	// is refused, since chunk boundaries are part of the store format.
	Chunker string
}

// DB is the store's database file. It holds no open handle between
// transactions: each one opens the file, runs and closes it, so a process
// holds the file only briefly (bbolt admits one writer across processes).
type DB struct {
	path string
	opts Options
}

// Open returns the database at path. It creates nothing: the first Update
// makes the file.
func Open(path string, opts Options) *DB { return &DB{path: path, opts: opts} }

// Exists reports whether the database file is there.
func (d *DB) Exists() bool {
	_, err := os.Stat(d.path)
	return err == nil
}

// View runs fn in a read-only transaction. A missing database reads as
// empty: fn gets a Tx whose every list is empty. A panic of bbolt on a
// damaged page, in fn's goroutine, is returned as ErrDamaged.
func (d *DB) View(fn func(*Tx) error) error {
	return guard(func() error {
		if !d.Exists() {
			return fn(&Tx{})
		}
		db, err := d.open(true)
		if err != nil {
			return err
		}
		defer db.Close()
		return db.View(func(tx *bolt.Tx) error { return fn(&Tx{tx: tx}) })
	})
}

// Update runs fn in a read-write transaction, creating the database if
// needed, and commits it when fn returns nil. A failed commit leaves the
// database as it was.
func (d *DB) Update(fn func(*Tx) error) error {
	return guard(func() error { return d.update(fn, false) })
}

// DryRun runs fn in a read-write transaction that is always rolled back:
// fn sees its own changes and the database keeps none of them. It returns
// fn's error.
func (d *DB) DryRun(fn func(*Tx) error) error {
	return guard(func() error { return d.update(fn, true) })
}

// errRollback rolls a dry run's transaction back.
var errRollback = errors.New("dry run")

func (d *DB) update(fn func(*Tx) error, dryRun bool) error {
	if !d.Exists() {
		if err := d.create(); err != nil {
			return err
		}
	}
	db, err := d.open(false)
	if err != nil {
		return err
	}
	defer db.Close()
	var fnErr error
	err = db.Update(func(tx *bolt.Tx) error {
		if fnErr = fn(&Tx{tx: tx}); fnErr == nil && dryRun {
			return errRollback
		}
		if fnErr == nil && CommitHook != nil {
			fnErr = CommitHook(d.path)
		}
		return fnErr
	})
	switch {
	case errors.Is(err, errRollback):
		return nil
	case err != nil && fnErr == nil:
		return fmt.Errorf("save the index (this change was not saved): %w", err)
	}
	return err
}

// guard runs fn and turns a panic into ErrDamaged: bbolt asserts on damaged
// pages, and with debug.SetPanicOnFault a page pointer past the mapped file
// panics too, so a damaged database fails an operation instead of the host
// process. It guards fn's goroutine only: methods of Tx that other
// goroutines call guard themselves.
func guard(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w (%v); run casckpt repair, which rebuilds it from the packs", ErrDamaged, r)
		}
	}()
	return fn()
}

// openBolt opens the bbolt database at path. Its first mapping is
// initialMmapSize: bbolt maps a growing file again each time it doubles,
// and first copies every node the transaction changed out of the old
// mapping; a first snapshot of 11k files remapped its database seven times
// in its commit (15 ms). The file still grows only as its pages need:
// bbolt pads it by AllocSize past a mapping that large, set to growStep.
func openBolt(path string, readOnly bool, timeout time.Duration) (*bolt.DB, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout:         timeout,
		ReadOnly:        readOnly,
		FreelistType:    bolt.FreelistMapType,
		InitialMmapSize: initialMmapSize,
	})
	if err != nil {
		return nil, err
	}
	db.AllocSize = growStep
	return db, nil
}

// The database's first mapping (address space, not memory), and the step
// by which its file grows: each growth costs a truncate and an fsync, and
// the step is a hole in the file until pages fill it.
const (
	initialMmapSize = 64 << 20
	growStep        = 256 << 10
)

func (d *DB) open(readOnly bool) (*bolt.DB, error) {
	db, err := openBolt(d.path, readOnly, d.opts.Timeout)
	if err != nil {
		return nil, d.openError(err)
	}
	if err := db.View(d.checkOpened); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// checkOpened checks a database just opened: whole (a file cut short
// below the pages its meta page names would fail later, at any read) and
// of a schema this casckpt reads.
func (d *DB) checkOpened(tx *bolt.Tx) error {
	st, err := os.Stat(d.path)
	if err != nil {
		return fmt.Errorf("open %s: %w", d.path, err)
	}
	if st.Size() < tx.Size() {
		return fmt.Errorf("%w (%s is cut short: %d bytes where its pages reach %d); run casckpt repair, which rebuilds it from the packs", ErrDamaged, d.path, st.Size(), tx.Size())
	}
	return d.checkSchema(tx)
}

func (d *DB) openError(err error) error {
	if errors.Is(err, berrors.ErrTimeout) {
		return fmt.Errorf("%w: another casckpt process holds %s; try again when it finishes", ErrBusy, d.path)
	}
	if errors.Is(err, berrors.ErrInvalid) || errors.Is(err, berrors.ErrChecksum) || errors.Is(err, berrors.ErrVersionMismatch) {
		return fmt.Errorf("%w (%s: %v); run casckpt repair, which rebuilds it from the packs", ErrDamaged, d.path, err)
	}
	return fmt.Errorf("open %s: %w", d.path, err)
}

// create makes a new database under a temporary name and renames it into
// place, so a crash never leaves a half-initialised database at path.
func (d *DB) create() error {
	temp, err := d.initTemp(nil)
	if err == nil {
		// Another process may have created the database meanwhile: keep
		// theirs, which may already hold data.
		if err = os.Link(temp, d.path); errors.Is(err, fs.ErrExist) {
			err = nil
		}
	}
	os.Remove(temp)
	if err != nil {
		return fmt.Errorf("create %s: %w", d.path, err)
	}
	return cas.SyncDir(filepath.Dir(d.path))
}

// openTemp opens a new, empty database beside path under a temporary
// name (see TempSuffix) and returns it with its name.
func (d *DB) openTemp() (*bolt.DB, string, error) {
	var suffix [8]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return nil, "", err
	}
	temp := d.path + TempSuffix + hex.EncodeToString(suffix[:])
	db, err := openBolt(temp, false, time.Second)
	if err != nil {
		return nil, "", fmt.Errorf("create %s: %w", temp, err)
	}
	return db, temp, nil
}

// initTemp makes a new, initialised database beside path under a temporary
// name, runs fill (if not nil) in its first transaction, and returns its
// name.
func (d *DB) initTemp(fill func(*Tx) error) (string, error) {
	db, temp, err := d.openTemp()
	if err != nil {
		return "", err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, name := range topBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		if err := meta.Put(keySchema, binary.BigEndian.AppendUint32(nil, SchemaBase)); err != nil {
			return err
		}
		if err := meta.Put(keyChunker, []byte(d.opts.Chunker)); err != nil {
			return err
		}
		if fill != nil {
			return fill(&Tx{tx: tx})
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

// TempSuffix follows the database's name in the names of databases being
// made; a killed creation, rebuild or compaction can leave one behind,
// which Rebuild and Compact remove.
const TempSuffix = ".tmp-"

// Rebuild replaces the database with a new one that fill writes. The old
// database, if any, is kept beside it under the returned name. At every
// moment the path holds a whole database, the old or the new. Databases
// that killed rebuilds or compactions left half made are removed first.
// The caller must keep every other process out (the store's exclusive
// lock).
func (d *DB) Rebuild(now time.Time, fill func(*Tx) error) (kept string, err error) {
	d.removeLeftovers()
	err = guard(func() error {
		temp, err := d.initTemp(fill)
		if err != nil {
			return fmt.Errorf("rebuild %s: %w", d.path, err)
		}
		defer os.Remove(temp)
		if _, err := os.Stat(d.path); err == nil {
			kept = d.path + ".old-" + now.UTC().Format("20060102T150405.000000000Z")
			if err := os.Link(d.path, kept); err != nil {
				kept = ""
				return fmt.Errorf("rebuild %s: keep the old database: %w", d.path, err)
			}
		}
		if err := os.Rename(temp, d.path); err != nil {
			if kept != "" {
				os.Remove(kept)
				kept = ""
			}
			return fmt.Errorf("rebuild %s: %w", d.path, err)
		}
		return cas.SyncDir(filepath.Dir(d.path))
	})
	return kept, err
}

// removeLeftovers removes the databases that killed rebuilds and
// compactions left half made beside the path.
func (d *DB) removeLeftovers() {
	if leftovers, err := filepath.Glob(d.path + TempSuffix + "*"); err == nil {
		for _, f := range leftovers {
			_ = os.Remove(f)
		}
	}
}

func (d *DB) checkSchema(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return fmt.Errorf("%w: no meta bucket", ErrSchema)
	}
	v := meta.Get(keySchema)
	if len(v) == 4 && binary.BigEndian.Uint32(v) > SchemaVersion {
		return fmt.Errorf("%w: %w (schema %d, this casckpt reads %d); upgrade casckpt", ErrSchema, ErrNewer, binary.BigEndian.Uint32(v), SchemaVersion)
	}
	if len(v) != 4 || binary.BigEndian.Uint32(v) < SchemaBase {
		return fmt.Errorf("%w: schema %x, this casckpt reads %d to %d; upgrade casckpt", ErrSchema, v, SchemaBase, SchemaVersion)
	}
	if c := meta.Get(keyChunker); string(c) != d.opts.Chunker {
		return fmt.Errorf("%w: chunker %q, this casckpt uses %q", ErrSchema, c, d.opts.Chunker)
	}
	return nil
}
