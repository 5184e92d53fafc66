package casckpt

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/restorer"
)

// Options configure a Store. The zero value means the defaults.
type Options struct {
	// LockTimeout bounds the wait for other processes (default 2 minutes).
	LockTimeout time.Duration
	// Now is the clock for every time the store records or compares
	// (snapshot times, last touch, retention). Default time.Now.
	Now func() time.Time
	// Logger receives debug messages; nil is silent.
	Logger *slog.Logger
	// HomeDir is the user's home directory, which Snapshot refuses to
	// capture whole (default os.UserHomeDir).
	HomeDir string
}

func (o Options) withDefaults() Options {
	if o.LockTimeout <= 0 {
		o.LockTimeout = 2 * time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.HomeDir == "" {
		o.HomeDir, _ = os.UserHomeDir()
	}
	return o
}

// Store is a checkpoint store in one directory. It is safe for concurrent
// use by goroutines and processes; it holds no open files between calls.
type Store struct {
	dir  string
	opts Options
	// packFS is the file system packs are written and deleted through, and
	// projectFS wraps a project directory for a restore's writes: the real
	// ones, or in tests ones that fail on demand.
	packFS    cas.FS
	projectFS func(*os.Root) restorer.FS
}

// Snapshot is a snapshot record.
type Snapshot = index.Snapshot

// Open returns the store in dir. It creates nothing: the directory is made,
// with mode 0700, by the first operation that writes.
func Open(dir string, opts Options) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", dir, err)
	}
	return &Store{dir: abs, opts: opts.withDefaults(), packFS: cas.OS, projectFS: restorer.RootFS}, nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) dbPath() string   { return filepath.Join(s.dir, "casckpt.db") }
func (s *Store) packsDir() string { return filepath.Join(s.dir, "packs") }
func (s *Store) lockPath() string { return filepath.Join(s.dir, "lock") }

// skipDirs lists what a scan must never capture: the store itself, should
// it lie inside a project.
func (s *Store) skipDirs() []string {
	if real, err := filepath.EvalSymlinks(s.dir); err == nil && real != s.dir {
		return []string{s.dir, real}
	}
	return []string{s.dir}
}

func (s *Store) exists() bool {
	_, err := os.Stat(s.dbPath())
	return err == nil
}

// ensureDirs creates the store's directories, private to the user.
func (s *Store) ensureDirs() error {
	for _, d := range []string{s.dir, s.packsDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("create store: %w", err)
		}
	}
	return nil
}

// removeIfUnused deletes a store directory that holds nothing but what
// begin created (the lock file and an empty packs directory).
func (s *Store) removeIfUnused() {
	if entries, err := os.ReadDir(s.packsDir()); err != nil || len(entries) > 0 {
		return
	}
	if entries, err := os.ReadDir(s.dir); err != nil || len(entries) > 2 || s.exists() {
		return
	}
	os.Remove(s.packsDir())
	os.Remove(s.lockPath())
	os.Remove(s.dir)
}

// ErrDatabase: the store's database is damaged.
var ErrDatabase = index.ErrDamaged

// recoverCorrupt turns a panic raised while reading the database (bbolt
// asserts on damaged pages; with debug.SetPanicOnFault a page pointer past
// the mapped file panics too) into an error, so a damaged store makes an
// operation fail instead of the host process. Deferred by every operation
// that reads the database on its own goroutine.
func recoverCorrupt(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w (%v); run casckpt repair, which rebuilds it from the packs", ErrDatabase, r)
	}
}

// session is one operation's hold on the store: the lock and, while it
// reads, a read-only database handle with one transaction.
type session struct {
	s       *Store
	lock    *storeLock
	db      *bolt.DB
	tx      *bolt.Tx
	objects *cas.Store
}

// begin takes the store lock. With create it makes the store's directories
// first; without, a missing store yields a session that holds no lock and
// reads as empty: it must change nothing (a store made meanwhile is
// another process's).
// A lock whose file clear deleted while this process waited is retried on
// the store as it is now (made again with create, else read as empty).
func (s *Store) begin(ctx context.Context, exclusive, create bool) (*session, error) {
	deadline := time.Now().Add(s.opts.LockTimeout)
	for {
		if create {
			if err := s.ensureDirs(); err != nil {
				return nil, err
			}
		} else if _, err := os.Stat(s.dir); errors.Is(err, fs.ErrNotExist) {
			return &session{s: s, objects: cas.NewStore(s.packsDir(), nil)}, nil
		}
		lock, err := lockStore(ctx, s.lockPath(), exclusive, deadline, s.opts.LockTimeout)
		if (errors.Is(err, errLockReplaced) || errors.Is(err, fs.ErrNotExist)) && time.Now().Before(deadline) {
			continue // the store was cleared meanwhile
		}
		if err != nil {
			return nil, err
		}
		return &session{s: s, lock: lock, objects: cas.NewStore(s.packsDir(), nil)}, nil
	}
}

// view opens the database read-only and starts the session's read
// transaction; a store without a database reads as empty.
func (ss *session) view() error {
	db, err := index.OpenRead(ss.s.dbPath(), ss.s.opts.LockTimeout)
	if err != nil || db == nil {
		return err
	}
	tx, err := db.Begin(false)
	if err != nil {
		db.Close()
		return err
	}
	ss.db, ss.tx = db, tx
	ss.objects = cas.NewStore(ss.s.packsDir(), tx)
	return nil
}

// endView closes the read transaction and the database.
func (ss *session) endView() {
	if ss.objects != nil {
		ss.objects.Close()
	}
	if ss.tx != nil {
		_ = ss.tx.Rollback()
		ss.tx = nil
	}
	if ss.db != nil {
		ss.db.Close()
		ss.db = nil
	}
	ss.objects = cas.NewStore(ss.s.packsDir(), nil)
}

// update runs fn in a read-write transaction of a freshly opened database.
// A session that began on a missing store holds no lock and never writes.
func (ss *session) update(fn func(tx *bolt.Tx) error) (err error) {
	if ss.lock == nil {
		return fmt.Errorf("%w: the store %s did not exist when this operation began; try again", ErrBusy, ss.s.dir)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverCorrupt(&err)
	db, err := index.OpenWrite(ss.s.dbPath(), ss.s.opts.LockTimeout)
	if err != nil {
		return err
	}
	defer db.Close()
	var fnErr error
	err = db.Update(func(tx *bolt.Tx) error {
		fnErr = fn(tx)
		return fnErr
	})
	if err != nil && fnErr == nil {
		err = fmt.Errorf("save the index (the store is unchanged): %w", err)
	}
	return err
}

func (ss *session) end() {
	ss.endView()
	ss.lock.unlock()
}

// read runs fn with a read view of the store under the shared lock.
func (s *Store) read(ctx context.Context, fn func(ss *session) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverCorrupt(&err)
	ss, err := s.begin(ctx, false, false)
	if err != nil {
		return err
	}
	defer ss.end()
	if err := ss.view(); err != nil {
		return err
	}
	return fn(ss)
}
