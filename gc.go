package casckpt

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/gc"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/repo"
)

// GCResult says what garbage collection freed.
type GCResult struct {
	ObjectsDeleted int
	BytesFreed     int64
}

// GC deletes every stored object no snapshot reaches and returns the space:
// dead packs are deleted, mostly dead ones rewritten. It waits for running
// snapshots and restores to finish and holds them off while it runs. On a
// backend without immediate deletion (a bucket) it works in phases a
// grace period apart (repo.Backend.Reclaim): a first run deletes nothing.
func (s *Store) GC(ctx context.Context) (GCResult, error) {
	ss, err := s.begin(ctx, true, false)
	if err != nil {
		return GCResult{}, err
	}
	defer ss.End()
	res, err := ss.collect(ctx, collectRequest{})
	return GCResult{ObjectsDeleted: res.objectsDeleted, BytesFreed: res.bytesFreed}, err
}

// collectRequest says what one collection drops before it sweeps.
type collectRequest struct {
	policy  gc.Policy
	cap     int64  // bytes; 0: no size cap
	protect cas.ID // never dropped
	current string // spared the cap's second phase
	dryRun  bool
	markRun bool // record the time for prune --auto
	// skipIdle: when nothing is to drop, nothing was dropped since the
	// last collection and the store is under the cap, do no mark (prune)
	skipIdle bool
}

// collectResult says what a collection dropped and freed.
type collectResult struct {
	plan           gc.Plan
	projects       int
	objectsDeleted int
	bytesFreed     int64
	projected      int64
	fits           bool
	idle           bool // skipIdle found nothing to do
}

// collect applies retention and the size cap, then sweeps, in one write
// transaction (a dry run's is rolled back). The caller holds the
// exclusive store lock. The sweep's pack deletions follow the commit. On
// a backend without immediate deletion there is no sweep: its drops were
// published before (dropNow), req asks for none, and collect only runs
// the backend's reclaim (repo.Backend.Reclaim), in its phases.
func (ss *hold) collect(ctx context.Context, req collectRequest) (collectResult, error) {
	var res collectResult
	if !ss.s.repo.Backend().Features().ImmediateDelete {
		r, err := ss.s.repo.Backend().Reclaim(ctx)
		return collectResult{fits: true, objectsDeleted: r.Objects, bytesFreed: r.Bytes}, err
	}
	if !ss.Locked() || !ss.s.repo.Exists() {
		// No store, or none when the hold began (so it holds no lock,
		// and one made since may hold packs a writer has not committed).
		return collectResult{fits: true}, nil
	}
	var sweep *cas.Sweep
	err := ss.UpdateOrDryRun(req.dryRun)(func(tx *index.Tx) error {
		projects, records, err := repo.LoadProjects(tx, repo.ProjectState)
		if err != nil {
			return err
		}
		res.projects = len(projects)
		if req.skipIdle {
			if res.idle, err = ss.idle(tx, projects, req); err != nil || res.idle {
				res.fits = true
				return err
			}
		}
		objects, trees, err := repo.TreeReader(ss.s.repo.Packs(), tx.Objects())
		if err != nil {
			return err
		}
		defer objects.Close()
		graph, err := ss.planCollection(ctx, tx, objects, trees, projects, req, &res)
		if err != nil || req.dryRun {
			return err
		}
		sweep, err = ss.dropAndSweep(ctx, tx, objects, req, graph, records, res.plan)
		if err != nil {
			return err
		}
		res.objectsDeleted = sweep.ObjectsDeleted
		if err := tx.ClearPendingDrops(); err != nil {
			return err
		}
		if req.markRun {
			return tx.SetLastPrune(ss.s.opts.Now())
		}
		return nil
	})
	if req.dryRun || res.idle {
		return res, err
	}
	if err != nil {
		if sweep != nil {
			sweep.Abort()
		}
		return res, err
	}
	// Committed: the deletions run to the end even if ctx is canceled.
	res.bytesFreed, err = sweep.Finish(context.WithoutCancel(ctx))
	if err != nil {
		err = fmt.Errorf("gc: no snapshot is harmed, but unused packs could not be deleted (%w); the next gc deletes them", err)
	}
	// The records the collection deleted left free pages in the database;
	// when they fill a third of it, it is copied without them.
	if compacted, cerr := ss.s.repo.DB().Compact(); cerr != nil {
		ss.s.opts.Logger.Debug("compaction of the database postponed", "err", cerr)
	} else if compacted {
		ss.s.opts.Logger.Debug("database compacted", "path", ss.s.repo.DBPath())
	}
	return res, err
}

// planCollection decides, into res, what retention and the size cap
// drop: the one plan of gc, prune and the cap on every backend. It marks
// every object the store's snapshots reach when the cap or a sweep needs
// it, and returns that graph with the dropped snapshots released (nil when
// it did not mark). The cap counts the stored bytes of every object a
// kept snapshot reaches, one copy each, where the records locate it, and
// the database when it is part of the store (not a journal's cache). It
// reads trees through objects and trees (repo.TreeReader), which may be
// nil when it does not mark (marks).
func (ss *hold) planCollection(ctx context.Context, tx *index.Tx, objects *cas.Store, trees *cas.TreeIndex, projects []gc.Project, req collectRequest, res *collectResult) (*gc.Graph, error) {
	plan := gc.PlanRetention(projects, req.policy, ss.s.opts.Now())
	res.plan, res.fits = plan, true
	if !ss.marks(req) {
		return nil, nil
	}
	graph, err := repo.MarkProjects(ctx, objects, trees, projects)
	if err != nil {
		if errors.Is(err, cas.ErrCorrupt) || errors.Is(err, cas.ErrNotFound) {
			err = fmt.Errorf("%w; run casckpt verify and forget the damaged snapshots", err)
		}
		return nil, err // a failing disk or a canceled call: nothing is damaged
	}
	if req.cap <= 0 {
		for _, d := range plan.Drops {
			graph.Release(d.Root, func(cas.ID) int64 { return 0 })
		}
		return graph, nil
	}
	_, inline := tx.InlineBytes()
	fixed, err := ss.s.databaseBytes(inline)
	if err != nil {
		return nil, err
	}
	res.plan, res.projected, res.fits = gc.PlanCap(plan, gc.CapInput{
		Projects: projects, Graph: graph, Size: repo.StoredSize(objects), Fixed: fixed,
		Cap: req.cap, Protect: req.protect, Current: req.current,
	})
	return graph, nil
}

// marks reports whether planCollection marks for req: under a size cap,
// or with immediate deletion (to sweep); else there is nothing to sweep.
func (ss *hold) marks(req collectRequest) bool {
	return req.cap > 0 || ss.s.repo.Backend().Features().ImmediateDelete
}

// maintain is every collection of the store, plan → drop → reclaim: it
// plans what retention and the size cap drop (planCollection), drops it
// (applyDrops) and reclaims the space. With immediate deletion the three
// run under the exclusive lock, the drops and the sweep in one
// transaction (collectToCap). Without, the drops are published under the
// shared lock after a refresh (dropNow) and the backend's reclaim
// follows: a gc now, or with due a collection that never waits
// (collectDue), as after a snapshot.
func (s *Store) maintain(ctx context.Context, req collectRequest, due bool) (collectResult, error) {
	if s.repo.Backend().Features().ImmediateDelete {
		ss, err := s.begin(ctx, true, false)
		if err != nil {
			return collectResult{}, err
		}
		defer ss.End()
		return ss.collectToCap(ctx, req)
	}
	res, err := s.dropNow(ctx, req)
	switch {
	case err != nil || req.dryRun:
		return res, err
	case due:
		if len(res.plan.Drops) > 0 {
			s.collectDue(ctx) // gc's first phase lists the data the drops freed
		}
		return res, nil
	}
	freed, err := s.GC(ctx)
	res.bytesFreed, res.objectsDeleted = freed.BytesFreed, freed.ObjectsDeleted
	return res, err
}

// dropNow drops what retention and the size cap drop, under the shared
// lock after a refresh of the records, and publishes the drops: on a
// backend without immediate deletion, whose reclaim runs afterwards
// (collect). A dry run changes nothing.
func (s *Store) dropNow(ctx context.Context, req collectRequest) (collectResult, error) {
	var res collectResult
	ss, err := s.begin(ctx, false, true) // shared: it refreshes first
	if err != nil {
		return res, err
	}
	defer ss.End()
	err = ss.UpdateOrDryRun(req.dryRun)(func(tx *index.Tx) error {
		projects, records, err := repo.LoadProjects(tx, repo.ProjectState)
		if err != nil {
			return err
		}
		res.projects = len(projects)
		var objects *cas.Store
		var trees *cas.TreeIndex
		if ss.marks(req) {
			if objects, trees, err = repo.TreeReader(s.repo.Packs(), tx.Objects()); err != nil {
				return err
			}
			defer objects.Close()
		}
		if _, err := ss.planCollection(ctx, tx, objects, trees, projects, req, &res); err != nil || req.dryRun {
			return err
		}
		if err := ss.applyDrops(ctx, tx, res.plan, records); err != nil {
			return err
		}
		if err := tx.AddPendingDrops(len(res.plan.Drops)); err != nil {
			return err
		}
		if req.markRun {
			return tx.SetLastPrune(s.opts.Now())
		}
		return nil
	})
	return res, err
}

// applyDrops deletes the snapshots plan drops (publishing each drop to
// the hold's journal) and the projects it forgets: the drop of gc, the
// size cap and prune on every backend.
func (ss *hold) applyDrops(ctx context.Context, tx *index.Tx, plan gc.Plan, records map[cas.ID]record) error {
	for _, d := range plan.Drops {
		if err := tx.DeleteSnapshot(records[d.ID]); err != nil {
			return err
		}
		if err := ss.Journal().Dropped(ctx, tx, d.ID); err != nil {
			return err
		}
	}
	for _, w := range plan.Forget {
		if err := tx.DeleteProject(w); err != nil {
			return err
		}
	}
	return nil
}

// dropAndSweep deletes what plan drops and prepares the sweep of every
// object no kept snapshot reaches (repo.PrepareSweep).
func (ss *hold) dropAndSweep(ctx context.Context, tx *index.Tx, objects *cas.Store, req collectRequest, graph *gc.Graph, records map[cas.ID]record, plan gc.Plan) (*cas.Sweep, error) {
	if err := ss.applyDrops(ctx, tx, plan, records); err != nil {
		return nil, err
	}
	return repo.PrepareSweep(ctx, tx, objects, ss.s.repo.Packs(), graph, records, plan, req.cap > 0, ss.s.repo.Backend().Features().Deltas)
}

// autoCollectAfter is how many dropped snapshots make a snapshot collect the
// garbage on its way out, so a store under keep-N does not keep growing.
const autoCollectAfter = 8

// collectDue collects garbage: a snapshot calls it on its way out when its
// commit counted enough snapshots dropped since the last collection
// (SnapshotResult.collectDue). It runs only when no other process is using
// the store: it never waits, and a failure only postpones the work to the
// next snapshot.
func (s *Store) collectDue(ctx context.Context) {
	h, err := s.repo.BeginNow(ctx)
	if err != nil {
		return
	}
	ss := &hold{Hold: h, s: s}
	defer ss.End()
	if _, err := ss.collect(ctx, collectRequest{}); err != nil {
		s.opts.Logger.Debug("automatic garbage collection postponed", "err", err)
	}
}

// databaseBytes is what the store's database counts for in the size cap:
// its file, less inline, the bytes of the inline packs in it, which the
// cap counts with the objects (a sweep moves or frees them, and a
// compaction the pages they held); nothing for a journal's cache.
func (s *Store) databaseBytes(inline int64) (int64, error) {
	if s.repo.Backend().Features().Journaled {
		return 0, nil
	}
	size, err := fileSize(s.repo.DBPath())
	return max(size-inline, 0), err
}

func fileSize(p string) (int64, error) {
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}
