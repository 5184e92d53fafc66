package repo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/packstore"
	"github.com/casckpt/casckpt/index"
)

// Repo is one store: its records (the index database), its objects (the
// packs, read through a cas.Store per view), its lock and its Backend.
// Operations begin a Hold of its lock and read or change the records
// through it.
type Repo struct {
	dir     string
	timeout time.Duration
	logger  *slog.Logger
	db      *index.DB
	packs   cas.PackStore
	backend Backend
}

// Options configure a Repo; every field is required.
type Options struct {
	// LockTimeout bounds the wait for other processes.
	LockTimeout time.Duration
	// Chunker names the chunker that the records' objects are cut with.
	Chunker string
	// Now is the store's clock.
	Now func() time.Time
	// Logger receives debug messages.
	Logger *slog.Logger
}

// Open returns the store in directory dir (absolute), its backend Local.
// It creates nothing: the directory is made by the first Begin with
// Create.
func Open(dir string, o Options) *Repo {
	r := &Repo{dir: dir, timeout: o.LockTimeout, logger: o.Logger}
	r.db = index.Open(filepath.Join(dir, "casckpt.db"), index.Options{Timeout: o.LockTimeout, Chunker: o.Chunker})
	r.packs = packstore.NewLocal(r.PacksDir(), nil)
	r.backend = NewLocal(dir, r.db, func() cas.PackStore { return r.packs }, o.Now)
	return r
}

// Attach makes b the store's backend, and its packs the store's: the
// directory is then the cache of b's records (repo/bucket).
func (r *Repo) Attach(b Backend) {
	r.backend = b
	r.packs = b.Packs()
}

// SetPacks replaces where the pack bytes live: tests wrap the packs
// directory in packs that fail on demand.
func (r *Repo) SetPacks(p cas.PackStore) { r.packs = p }

// Backend is the store's backend.
func (r *Repo) Backend() Backend { return r.backend }

// InlineMax is the largest pack that a turn's Writer keeps inline, in the
// records' database (cas.Writer.SetInline), where the backend has
// Features.InlinePacks. A turn that edits a few source files stores a
// few KiB; a larger turn pays the pack file's two fsyncs, a small share
// of its cost, and keeps the database small: bbolt's file does not
// shrink until a compaction, and the size cap counts it. A variable, so
// that tests of the pack files' layout can turn inline packs off (0).
var InlineMax int64 = 64 << 10

// NewWriter returns a Writer for a turn's objects, deduplicated against
// existing (nil: none), storing into the store's packs, or inline in the
// records' database up to InlineMax bytes where the backend allows it.
func (r *Repo) NewWriter(existing cas.Existing) *cas.Writer {
	w := cas.NewWriter(r.packs, existing)
	if r.backend.Features().InlinePacks && InlineMax > 0 {
		w.SetInline(InlineMax)
	}
	return w
}

// DB is the store's records.
func (r *Repo) DB() *index.DB { return r.db }

// Packs is where the pack bytes live.
func (r *Repo) Packs() cas.PackStore { return r.packs }

// DBPath is the file of the records' database.
func (r *Repo) DBPath() string { return filepath.Join(r.dir, "casckpt.db") }

// PacksDir is the directory of the packs of a store in a directory.
func (r *Repo) PacksDir() string { return filepath.Join(r.dir, "packs") }

// LockPath is the store's lock file, which Clear deletes last.
func (r *Repo) LockPath() string { return filepath.Join(r.dir, "lock") }

// Exists reports whether the store's records exist.
func (r *Repo) Exists() bool { return r.db.Exists() }

// ensureDirs creates the store's directories, private to the user.
func (r *Repo) ensureDirs() error {
	for _, d := range []string{r.dir, r.PacksDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("create store: %w", err)
		}
	}
	return nil
}

// RemoveIfUnused deletes a store directory that holds nothing but what
// Begin created (the lock file and an empty packs directory).
func (r *Repo) RemoveIfUnused() {
	if entries, err := os.ReadDir(r.PacksDir()); err != nil || len(entries) > 0 {
		return
	}
	if entries, err := os.ReadDir(r.dir); err != nil || len(entries) > 2 || r.Exists() {
		return
	}
	os.Remove(r.PacksDir())
	os.Remove(r.LockPath())
	os.Remove(r.dir)
}

// BeginOptions say how an operation begins.
type BeginOptions struct {
	// Exclusive takes the lock exclusive, else shared.
	Exclusive bool
	// Create makes the store's directories first; without it, a missing
	// store yields a Hold that holds no lock and reads as empty.
	Create bool
	// Fresh: a shared hold brings the records fully up to date, however
	// recently they were (Backend.Refresh's force), as verify does.
	Fresh bool
	// Alongside, if not nil, is called once the lock is held, at the same
	// time as a bucket's cache is brought up to date, and the Hold is
	// returned once both are done: a snapshot lists its tree while the
	// bucket is listed.
	Alongside func()
}

// Begin takes the store lock as o says. Without Create, a missing store
// yields a Hold that holds no lock and reads as empty: it must change
// nothing (a store made meanwhile is another process's).
// A lock whose file clear deleted while this process waited is retried on
// the store as it is now (made again with Create, else read as empty).
// A store whose records are a journal's cache (Features.Journaled)
// always has them made, and a shared hold brings them up to date first
// (Backend.Refresh), rebuilding them once if they cannot be.
func (r *Repo) Begin(ctx context.Context, o BeginOptions) (*Hold, error) {
	exclusive, create, alongside := o.Exclusive, o.Create || r.backend.Features().Journaled, o.Alongside
	deadline := time.Now().Add(r.timeout)
	rebuilt := false
	for {
		if create {
			if err := r.ensureDirs(); err != nil {
				return nil, err
			}
		} else if _, err := os.Stat(r.dir); errors.Is(err, fs.ErrNotExist) {
			return &Hold{r: r, journal: r.backend.Journal()}, nil
		}
		lock, err := LockFile(ctx, r.LockPath(), exclusive, deadline, r.timeout)
		if (errors.Is(err, ErrLockReplaced) || errors.Is(err, fs.ErrNotExist)) && time.Now().Before(deadline) {
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
		journal := r.backend.Journal()
		if !exclusive {
			journal, err = r.backend.Refresh(ctx, o.Fresh)
		}
		beside.Wait()
		if errors.Is(err, ErrStale) && !rebuilt { // once: a second time is not the records' fault
			lock.Unlock()
			rebuilt = true
			if err := r.rebuild(ctx, err); err != nil {
				return nil, err
			}
			continue
		} else if err != nil {
			lock.Unlock()
			return nil, err
		}
		return &Hold{r: r, lock: lock, journal: journal}, nil
	}
}

// BeginNow takes the exclusive lock of an existing store if no other
// process holds it, without waiting; its error is index.ErrBusy's when
// one does.
func (r *Repo) BeginNow(ctx context.Context) (*Hold, error) {
	lock, err := LockFile(ctx, r.LockPath(), true, time.Now(), 0)
	if err != nil {
		return nil, err
	}
	return &Hold{r: r, lock: lock, journal: r.backend.Journal()}, nil
}

// rebuild makes the records anew from the backend's journal, when a
// refresh found them unusable (why), as if they had been deleted. It
// takes the exclusive lock (the caller holds none) and, unlike repair,
// does not keep the old database.
func (r *Repo) rebuild(ctx context.Context, why error) error {
	r.logger.Debug("the records cannot be brought up to date: rebuilding them", "store", r.backend.Location(), "why", why)
	h, err := r.Begin(ctx, BeginOptions{Exclusive: true, Create: true})
	if err != nil {
		return err
	}
	defer h.End()
	_, err = r.backend.Rebuild(ctx, false)
	return err
}

// Hold is one operation's hold on the store: the store lock, shared or
// exclusive, or none when the store did not exist as it began.
type Hold struct {
	r    *Repo
	lock *Lock
	// journal is where the operation publishes what it commits.
	journal Journal
}

// View is a read transaction of the store: its records and its objects.
type View struct {
	Tx      *index.Tx
	Objects *cas.Store
}

// Locked reports whether the hold holds the lock (the store existed when
// it began, or it made it).
func (h *Hold) Locked() bool { return h.lock != nil }

// Lock is the held lock (nil when none).
func (h *Hold) Lock() *Lock { return h.lock }

// Journal is where the operation publishes what it commits (see Journal).
func (h *Hold) Journal() Journal { return h.journal }

// Read runs fn with a read view; a store without a database reads as
// empty. The view's objects may be read from any goroutine until fn
// returns.
func (h *Hold) Read(fn func(v View) error) error {
	return h.r.db.View(func(tx *index.Tx) error {
		objects := cas.NewStore(h.r.packs, tx.Objects())
		defer objects.Close()
		return fn(View{tx, objects})
	})
}

// Update runs fn in a read-write transaction. A hold that began on a
// missing store holds no lock and never writes.
func (h *Hold) Update(fn func(tx *index.Tx) error) error {
	if h.lock == nil {
		return fmt.Errorf("%w: the store %s did not exist when this operation began; try again", index.ErrBusy, h.r.dir)
	}
	return h.r.db.Update(fn)
}

// UpdateOrDryRun returns Update, or for a dry run the database's DryRun,
// whose transaction is rolled back: a dry run of collect, the size cap
// or prune runs their code to the end and changes nothing.
func (h *Hold) UpdateOrDryRun(dryRun bool) func(fn func(tx *index.Tx) error) error {
	if dryRun {
		return h.r.db.DryRun
	}
	return h.Update
}

// End releases the lock.
func (h *Hold) End() { h.lock.Unlock() }
