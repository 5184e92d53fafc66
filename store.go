package casckpt

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/packstore"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/restorer"
	"github.com/casckpt/casckpt/manifest"
	"github.com/casckpt/casckpt/repo"
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
	// For OpenURL of an s3:// store: S3 names the server and its
	// credentials, CacheDir holds the caches of the index (default the
	// casckpt directory of os.UserCacheDir), and S3Transport carries the
	// requests (default minio-go's).
	S3          S3Server
	CacheDir    string
	S3Transport http.RoundTripper
	// UploadProgress, if set, is called on an s3:// store with the number
	// of bytes of packs sent to the bucket since its former call, from
	// the goroutines that send them (a few packs go at once).
	UploadProgress func(bytes int64)
	// GCGrace is, on an s3:// store, how long by the server's clock a pack
	// that gc found unneeded stays listed as pending before a later gc
	// may delete it (default 1 hour; the command takes $CASCKPT_GC_GRACE).
	// Every snapshot must finish well within half of it, or it re-checks
	// before it commits.
	GCGrace time.Duration
	// GCHorizon is, on an s3:// store, the age by the server's clock past
	// which gc removes deleted lists (docs/bucket.md, "Horizon"; default
	// 7 days; the command takes $CASCKPT_GC_HORIZON).
	GCHorizon time.Duration
	// Machine is, on an s3:// store, this machine's ID (1 to 64 letters,
	// digits, dots, dashes and underscores): its projects are its own
	// (docs/bucket.md, "Machines"). Default: the ID kept in CacheDir,
	// made there the first time.
	Machine string
	// ReadMachine is, on an s3:// store, the machine whose project at the
	// given directory the reading use cases (List, Diff, FileLog, Turns,
	// Cat and the other reads of a snapshot) read, and whose snapshot
	// Restore restores into the directory; "" is this machine.
	ReadMachine string
	// FleetKey is, on an s3:// store, the fleet's secret: every object
	// this store puts carries a keyed BLAKE3 MAC derived from it, and
	// objects without a valid one are ignored (VerifyResult.Rejected
	// names them). It is never stored, in the bucket or the cache.
	FleetKey string
	// S3Timeout, if set, caps how long an operation on an s3:// store
	// waits on a silent server (default 20 seconds; the command takes
	// $CASCKPT_S3_TIMEOUT, and the hook the shorter of it and one second).
	S3Timeout time.Duration

	// syncEvery is, on an s3:// store, how long after a sync the cache
	// counts as up to date (bucket.Config.SyncEvery); only tests set it
	// (export_test.go), as a long-lived process's.
	syncEvery time.Duration
}

// S3Server names the S3-compatible server of an s3:// store and the
// credentials that sign its requests. The library reads no environment:
// the command fills it from AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION and
// AWS_MAX_ATTEMPTS (docs/commands.md).
type S3Server struct {
	// Endpoint is the server's URL, "http://HOST:PORT" or "https://HOST";
	// "" is https://s3.amazonaws.com.
	Endpoint string
	// AccessKey and SecretKey (both required) and SessionToken (may be
	// empty) sign the requests.
	AccessKey, SecretKey, SessionToken string
	// Region of the bucket; "" asks the server once.
	Region string
	// MaxAttempts is how often a failed request is tried in all; 0 is
	// minio-go's default (10), 1 no retry.
	MaxAttempts int
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
	db   *index.DB
	// packs is where pack bytes live (the packs directory), and projectFS
	// wraps a project directory for a restore's writes: the real ones, or
	// in tests ones that fail on demand.
	packs     cas.PackStore
	projectFS func(*os.Root) restorer.FS
	// backend keeps the store's data beyond its records: a repo.Local
	// for a store in a directory, a bucket.Backend for one opened from an
	// s3:// URL (see OpenURL).
	backend repo.Backend
}

// record is a snapshot record as the index keeps it; hosts see Snapshot.
type record = index.Snapshot

// Snapshot is what a host sees of a snapshot.
type Snapshot struct {
	ID      cas.ID
	Project string // the project's workdir
	// Serial is the snapshot's stable number in its project, #Serial: 1
	// for the project's first snapshot, one more for each later one, never
	// given again once its snapshot is dropped.
	Serial uint64
	Time   time.Time
	Reason string
	Pinned bool
	Files  int64 // files and links captured
	Bytes  int64 // their total size
	// MaxFileSize is the size limit it was taken with (0: unknown): larger
	// files were left out, and a restore of it leaves them alone.
	MaxFileSize int64
	// Session and Turn are the host's labels ("" when it gave none).
	Session string
	Turn    string
}

// hostSnapshot returns what a host sees of record r.
func hostSnapshot(r record) Snapshot {
	return Snapshot{ID: r.ID, Project: r.Project, Serial: r.Seq, Time: r.Time, Reason: r.Reason, Pinned: r.Pinned, Files: r.Stats.Files, Bytes: r.Stats.Bytes, MaxFileSize: r.MaxFileSize,
		Session: r.Session, Turn: r.Turn}
}

// Open returns the store in dir. It creates nothing: the directory is made,
// with mode 0700, by the first operation that writes.
func Open(dir string, opts Options) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", dir, err)
	}
	s := &Store{dir: abs, opts: opts.withDefaults(), projectFS: restorer.RootFS}
	s.db = index.Open(s.dbPath(), index.Options{Timeout: s.opts.LockTimeout, Chunker: manifest.ChunkerName})
	s.packs = packstore.NewLocal(s.packsDir(), nil)
	s.backend = repo.NewLocal(abs, s.db, func() cas.PackStore { return s.packs }, s.opts.Now)
	return s, nil
}

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

func (s *Store) exists() bool { return s.db.Exists() }

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

// hold is one operation's hold on the store: the store lock, shared or
// exclusive, or none when the store did not exist as it began.
type hold struct {
	s    *Store
	lock *storeLock
	// journal is where the operation publishes what it commits (see
	// repo.Journal).
	journal repo.Journal
}

// begin takes the store lock. With create it makes the store's directories
// first; without, a missing store yields a hold that holds no lock and
// reads as empty: it must change nothing (a store made meanwhile is
// another process's).
// A lock whose file clear deleted while this process waited is retried on
// the store as it is now (made again with create, else read as empty).
// A store whose records are a journal's cache (repo.Features.Journaled)
// always has them made, and a shared hold brings them up to date
// first (repo.Backend.Refresh), rebuilding them once if they cannot be.
func (s *Store) begin(ctx context.Context, exclusive, create bool) (*hold, error) {
	return s.beginWith(ctx, beginOptions{exclusive: exclusive, create: create})
}

// beginOptions say how an operation begins: begin's exclusive and create,
// and two more.
type beginOptions struct {
	exclusive, create bool
	// fresh: a shared hold brings the records fully up to date, however
	// recently they were (repo.Backend.Refresh's force), as verify does.
	fresh bool
	// alongside, if not nil, is called once the lock is held, at the same
	// time as a bucket's cache is brought up to date, and the hold is
	// returned once both are done: a snapshot lists its tree while the
	// bucket is listed.
	alongside func()
}

// beginWith is begin, as o says.
func (s *Store) beginWith(ctx context.Context, o beginOptions) (*hold, error) {
	exclusive, create, alongside := o.exclusive, o.create || s.backend.Features().Journaled, o.alongside
	deadline := time.Now().Add(s.opts.LockTimeout)
	rebuilt := false
	for {
		if create {
			if err := s.ensureDirs(); err != nil {
				return nil, err
			}
		} else if _, err := os.Stat(s.dir); errors.Is(err, fs.ErrNotExist) {
			return &hold{s: s, journal: s.backend.Journal()}, nil
		}
		lock, err := lockStore(ctx, s.lockPath(), exclusive, deadline, s.opts.LockTimeout)
		if (errors.Is(err, errLockReplaced) || errors.Is(err, fs.ErrNotExist)) && time.Now().Before(deadline) {
			continue // the store was cleared meanwhile
		}
		if err != nil {
			return nil, err
		}
		var beside sync.WaitGroup
		if alongside != nil {
			beside.Go(alongside)
			alongside = nil // once, even if the records are rebuilt below
		}
		journal := s.backend.Journal()
		if !exclusive {
			journal, err = s.backend.Refresh(ctx, o.fresh)
		}
		beside.Wait()
		if errors.Is(err, repo.ErrStale) && !rebuilt { // once: a second time is not the records' fault
			lock.unlock()
			rebuilt = true
			if err := s.rebuild(ctx, err); err != nil {
				return nil, err
			}
			continue
		} else if err != nil {
			lock.unlock()
			return nil, err
		}
		return &hold{s: s, lock: lock, journal: journal}, nil
	}
}

// rebuild makes the records anew from the backend's journal, when a
// refresh found them unusable (why), as if they had been deleted. It
// takes the exclusive lock (the caller holds none) and, unlike repair,
// does not keep the old database.
func (s *Store) rebuild(ctx context.Context, why error) error {
	s.opts.Logger.Debug("the records cannot be brought up to date: rebuilding them", "store", s.Location(), "why", why)
	ss, err := s.begin(ctx, true, true)
	if err != nil {
		return err
	}
	defer ss.end()
	_, err = s.backend.Rebuild(ctx, false)
	return err
}

// view is a read transaction of the store: its records and its objects.
type view struct {
	tx      *index.Tx
	objects *cas.Store
}

// read runs fn with a read view; a store without a database reads as
// empty. The view's objects may be read from any goroutine until fn
// returns.
func (ss *hold) read(fn func(v view) error) error {
	return ss.s.db.View(func(tx *index.Tx) error {
		objects := cas.NewStore(ss.s.packs, tx.Objects())
		defer objects.Close()
		return fn(view{tx, objects})
	})
}

// update runs fn in a read-write transaction. A hold that began on a
// missing store holds no lock and never writes.
func (ss *hold) update(fn func(tx *index.Tx) error) error {
	if ss.lock == nil {
		return fmt.Errorf("%w: the store %s did not exist when this operation began; try again", ErrBusy, ss.s.dir)
	}
	return ss.s.db.Update(fn)
}

// updateOrDryRun returns update, or for a dry run the database's
// DryRun, whose transaction is rolled back: a dry run of collect, the size
// cap or prune runs their code to the end and changes nothing.
func (ss *hold) updateOrDryRun(dryRun bool) func(fn func(tx *index.Tx) error) error {
	if dryRun {
		return ss.s.db.DryRun
	}
	return ss.update
}

func (ss *hold) end() { ss.lock.unlock() }

// read runs fn with a read view of the store under the shared lock. A
// snapshot it found damaged by a missing pack is checked again
// (hold.recheckMissing).
func (s *Store) read(ctx context.Context, fn func(v view) error) error {
	return s.readWith(ctx, beginOptions{}, fn)
}

// readWith is read, its hold begun as o says (shared).
func (s *Store) readWith(ctx context.Context, o beginOptions, fn func(v view) error) error {
	ss, err := s.beginWith(ctx, o)
	if err != nil {
		return err
	}
	defer ss.end()
	return ss.recheckMissing(ctx, ss.read(fn))
}
