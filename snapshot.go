package casckpt

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/restorer"
	"github.com/casckpt/casckpt/internal/scan"
	"github.com/casckpt/casckpt/manifest"
)

// DefaultKeep is how many snapshots per project Snapshot keeps by default.
const DefaultKeep = 20

// SnapshotOptions tune Snapshot. The zero value means the defaults.
type SnapshotOptions struct {
	Reason string
	// Keep is the most snapshots kept for the project: older unpinned ones
	// are dropped (default DefaultKeep; negative keeps all).
	Keep int
	// MaxFileSize excludes larger files (default 10 MiB).
	MaxFileSize int64
	// MaxFiles refuses larger trees (default 50,000).
	MaxFiles int
	// MaxStoreSize is the store's size cap in bytes: when a new snapshot
	// takes the store past it, older snapshots are dropped and collected in
	// the same call until it fits (default DefaultMaxStoreSize; negative:
	// no cap).
	MaxStoreSize int64
	// Progress, if set, is called as files are hashed, from any goroutine.
	Progress func(filesHashed, bytesHashed int64)
}

func (o SnapshotOptions) withDefaults() SnapshotOptions {
	if o.Keep == 0 {
		o.Keep = DefaultKeep
	}
	if o.MaxStoreSize == 0 {
		o.MaxStoreSize = DefaultMaxStoreSize
	}
	return o
}

// SnapshotResult says what Snapshot did.
type SnapshotResult struct {
	// Created is false when the tree equals the newest snapshot (ID is then
	// that snapshot's) or is empty with no snapshot yet (ID is zero).
	Created bool
	ID      cas.ID
	Project string
	Files   int64 // files and links captured
	Bytes   int64 // their size
	Hashed  int64 // files read (the others were vouched for by the stat cache)
	// Stored is what the snapshot added to the store.
	Stored cas.WriteStats
	// Dropped are the snapshots removed by the Keep rule and the size cap.
	Dropped []cas.ID
	// BytesFreed is what the size cap returned.
	BytesFreed int64
	// Warnings name files not captured or changing while read.
	Warnings []string

	packBytes int64 // the store's pack bytes after the commit
}

// Snapshot records the tree of directory dir as a new snapshot of its
// project, unless it equals the newest one.
func (s *Store) Snapshot(ctx context.Context, dir string, opts SnapshotOptions) (_ SnapshotResult, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverCorrupt(&err)
	workdir, err := ProjectDir(dir)
	if err != nil {
		return SnapshotResult{}, err
	}
	if err := refuseSnapshotDir(workdir, s.opts.HomeDir); err != nil {
		return SnapshotResult{}, err
	}
	opts = opts.withDefaults()
	_, statErr := os.Stat(s.dir)
	ss, err := s.begin(ctx, false, true)
	if err != nil {
		return SnapshotResult{}, err
	}
	res, err := ss.snapshot(ctx, workdir, opts)
	ss.end()
	if err != nil && errors.Is(statErr, fs.ErrNotExist) {
		s.removeIfUnused() // a refused first snapshot leaves no store behind
	}
	if err != nil || !res.Created || opts.MaxStoreSize < 0 {
		return res, err
	}
	if len(res.Dropped) > 0 {
		s.collectIfDue(ctx)
	}
	capped, err := s.enforceCap(ctx, opts.MaxStoreSize, res)
	if err != nil {
		return res, fmt.Errorf("snapshot %s was taken, but freeing space for the size cap failed: %w", res.ID.Short(), err)
	}
	for _, d := range capped.plan.Drops {
		res.Dropped = append(res.Dropped, d.ID)
	}
	res.BytesFreed = capped.bytesFreed
	if !capped.fits {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the store needs %d bytes, more than its %d-byte cap, for pinned and newest snapshots", capped.projected, opts.MaxStoreSize))
	}
	return res, nil
}

// snapshot is Snapshot under a held lock.
func (ss *session) snapshot(ctx context.Context, workdir string, opts SnapshotOptions) (SnapshotResult, error) {
	p, err := ss.scanSnapshot(ctx, workdir, opts, nil)
	if err != nil {
		return SnapshotResult{Project: workdir}, err
	}
	return ss.commitSnapshot(ctx, p)
}

// pendingSnapshot is a scanned tree whose new objects are written to packs
// but not committed: commitSnapshot records it, abort drops it.
type pendingSnapshot struct {
	workdir string
	opts    SnapshotOptions
	w       *cas.Writer
	scanned scan.Result
	newest  *Snapshot // the project's newest snapshot when the scan began
	project index.Project
	known   bool // the project was in the index
	nextSeq uint64
}

// abort removes the pending snapshot's packs.
func (p *pendingSnapshot) abort() { p.w.Abort() }

// scanSnapshot opens the session's read view and scans workdir, storing
// what the tree needs through a new Writer (seen through wrap, when not
// nil, so a caller can also keep what is put). The view stays open for the
// caller; commitSnapshot or the session's end closes it.
func (ss *session) scanSnapshot(ctx context.Context, workdir string, opts SnapshotOptions, wrap func(cas.Putter) cas.Putter) (*pendingSnapshot, error) {
	if err := ss.view(); err != nil {
		return nil, err
	}
	p := &pendingSnapshot{workdir: workdir, opts: opts, nextSeq: 1}
	var cache map[string]index.DirCache
	if ss.tx != nil {
		snaps, err := index.Snapshots(ss.tx, workdir)
		if err == nil {
			p.project, p.known, err = index.GetProject(ss.tx, workdir)
		}
		if err != nil {
			ss.endView()
			return nil, err
		}
		if len(snaps) > 0 {
			p.newest = &snaps[0]
		}
		cache = index.LoadStatCache(ss.tx, workdir)
		p.nextSeq = index.NextSeq(ss.tx, workdir)
	}
	p.w = cas.NewWriter(ss.s.packFS, ss.s.packsDir(), ss.objects)
	var put cas.Putter = p.w
	if wrap != nil {
		put = wrap(p.w)
	}
	var err error
	p.scanned, err = scan.Scan(ctx, workdir, put, scan.Options{
		MaxFileSize: opts.MaxFileSize, MaxFiles: opts.MaxFiles, Cache: cache, Trees: ss.objects, Progress: opts.Progress,
		Skip: ss.s.skipDirs(),
	})
	if err != nil {
		ss.endView()
		p.abort()
		if errors.Is(err, scan.ErrTooManyFiles) {
			err = fmt.Errorf("%w: %w", ErrRefused, err)
		}
		return nil, err
	}
	restorer.RemoveLeftovers(workdir, p.scanned.Leftovers) // a killed restore's temporary files
	return p, nil
}

// commitSnapshot records a pending snapshot, unless its tree equals the
// project's newest snapshot. It closes the session's read view.
func (ss *session) commitSnapshot(ctx context.Context, p *pendingSnapshot) (SnapshotResult, error) {
	workdir, opts, w, scanned := p.workdir, p.opts, p.w, p.scanned
	newest, project, known := p.newest, p.project, p.known
	res := SnapshotResult{Project: workdir}
	res.Files, res.Bytes, res.Hashed, res.Warnings = scanned.Files, scanned.Bytes, scanned.Hashed, scanned.Warnings
	now := ss.s.opts.Now()

	if (newest != nil && newest.Root == scanned.Root) || (newest == nil && scanned.Root == manifest.EmptyTreeID) {
		// Nothing to record. Every object the tree needs is stored already.
		ss.endView()
		w.Abort()
		if newest != nil {
			res.ID = newest.ID
		}
		cacheChanged := len(scanned.CachePut) > 0 || len(scanned.CacheRemove) > 0
		if !cacheChanged && (!known || now.Sub(project.LastTouch) < touchGranularity) {
			return res, nil
		}
		err := ss.update(func(tx *bolt.Tx) error {
			if known {
				project.LastTouch = now
				if err := index.PutProject(tx, project); err != nil {
					return err
				}
			}
			return index.UpdateStatCache(tx, workdir, scanned.CachePut, scanned.CacheRemove)
		})
		return res, err
	}

	rec := Snapshot{ID: index.NewSnapshotID(workdir, scanned.Root, now, opts.Reason), Project: workdir, Root: scanned.Root,
		Time: now, Reason: opts.Reason, Stats: index.Stats{Files: scanned.Files, Bytes: scanned.Bytes}, MaxFileSize: scanned.MaxFileSize}
	var err error
	rec.RecordID, err = putCopy(ctx, w, rec, p.nextSeq, "")
	ss.endView()
	if err != nil {
		w.Abort()
		return res, err
	}
	if err := w.Flush(); err != nil {
		w.Abort()
		return res, err
	}
	var raced *Snapshot // a snapshot of the same tree that another process committed meanwhile
	err = ss.update(func(tx *bolt.Tx) error {
		snaps, err := index.Snapshots(tx, workdir)
		if err != nil {
			return err
		}
		if len(snaps) > 0 && snaps[0].Root == scanned.Root {
			raced = &snaps[0]
			return errSameAsNewest
		}
		if _, err := w.Commit(tx, false); err != nil {
			return err
		}
		p, ok, err := index.GetProject(tx, workdir)
		if err != nil {
			return err
		}
		if !ok {
			p = index.Project{Workdir: workdir, Created: now}
		}
		p.LastTouch = now
		if err := index.PutProject(tx, p); err != nil {
			return err
		}
		if err := index.AddSnapshot(tx, &rec); err != nil {
			return err
		}
		if err := index.UpdateStatCache(tx, workdir, scanned.CachePut, scanned.CacheRemove); err != nil {
			return err
		}
		if res.Dropped, err = applyKeep(tx, workdir, opts.Keep); err != nil {
			return err
		}
		if res.packBytes, err = cas.PackBytes(tx); err != nil {
			return err
		}
		return addPendingDrops(tx, len(res.Dropped))
	})
	if errors.Is(err, errSameAsNewest) {
		w.Abort() // nothing to record: the other process recorded this tree
		res.ID = raced.ID
		return res, nil
	}
	if err != nil {
		w.Abort()
		return res, err
	}
	res.Created, res.ID, res.Stored = true, rec.ID, w.Stats()
	return res, nil
}

// errSameAsNewest rolls back a snapshot's commit when the project's newest
// snapshot, committed by another process since this one looked, holds the
// same tree: processes snapshotting one tree at once record it once.
var errSameAsNewest = errors.New("the newest snapshot holds the same tree")

// putCopy stores the copy of snapshot record rec, from which a lost index
// can be rebuilt, with the data it describes; seq is the sequence number
// it expects.
func putCopy(ctx context.Context, w *cas.Writer, rec Snapshot, seq uint64, origin string) (cas.ID, error) {
	rec.Seq = seq
	return w.Put(ctx, cas.KindRecord, index.EncodeCopy(rec, origin))
}

// touchGranularity: a no-change snapshot refreshes the project's last touch
// only when it is older than this, so that an unchanged tree costs no write.
const touchGranularity = 10 * time.Minute

// applyKeep drops a project's unpinned snapshots beyond the newest keep.
func applyKeep(tx *bolt.Tx, workdir string, keep int) ([]cas.ID, error) {
	dropped := []cas.ID{}
	if keep < 0 {
		return dropped, nil
	}
	snaps, err := index.Snapshots(tx, workdir)
	if err != nil {
		return dropped, err
	}
	for i, sn := range snaps {
		if i < keep || sn.Pinned {
			continue
		}
		if err := index.DeleteSnapshot(tx, sn); err != nil {
			return dropped, err
		}
		dropped = append(dropped, sn.ID)
	}
	return dropped, nil
}
