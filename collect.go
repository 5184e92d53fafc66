package casckpt

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/gc"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/manifest"
)

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
// transaction (a dry run's is rolled back). The caller holds the exclusive
// store lock. The sweep's pack deletions follow the commit.
func (ss *session) collect(ctx context.Context, req collectRequest) (collectResult, error) {
	var res collectResult
	if err := ss.s.refuseRemoteDelete(); err != nil {
		return res, err
	}
	if ss.lock == nil || !ss.s.exists() {
		// No store, or none when the session began (so it holds no lock,
		// and one made since may hold packs a writer has not committed).
		return collectResult{fits: true}, nil
	}
	var sweep *cas.Sweep
	err := ss.updateOrDryRun(req.dryRun)(func(tx *index.Tx) error {
		projects, records, err := loadProjects(tx)
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
		objects := cas.NewStore(ss.s.packs, tx.Objects())
		defer objects.Close()
		graph, err := ss.planCollection(ctx, objects, projects, req, &res)
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
	if compacted, cerr := ss.s.db.Compact(); cerr != nil {
		ss.s.opts.Logger.Debug("compaction of the database postponed", "err", cerr)
	} else if compacted {
		ss.s.opts.Logger.Debug("database compacted", "path", ss.s.dbPath())
	}
	return res, err
}

// planCollection marks every object the store's snapshots reach and
// decides, into res, what retention and the size cap drop. The graph it
// returns has the dropped snapshots released.
func (ss *session) planCollection(ctx context.Context, objects *cas.Store, projects []gc.Project, req collectRequest, res *collectResult) (*gc.Graph, error) {
	graph, err := markProjects(ctx, objects, projects)
	if err != nil {
		if errors.Is(err, cas.ErrCorrupt) || errors.Is(err, cas.ErrNotFound) {
			err = fmt.Errorf("%w; run casckpt verify and forget the damaged snapshots", err)
		}
		return nil, err // a failing disk or a canceled call: nothing is damaged
	}
	plan := gc.PlanRetention(projects, req.policy, ss.s.opts.Now())
	res.fits = true
	if req.cap > 0 {
		dbSize, err := fileSize(ss.s.dbPath())
		if err != nil {
			return nil, err
		}
		plan, res.projected, res.fits = gc.PlanCap(plan, gc.CapInput{
			Projects: projects, Graph: graph, Size: storedSize(objects), Fixed: dbSize,
			Cap: req.cap, Protect: req.protect, Current: req.current,
		})
	} else {
		for _, d := range plan.Drops {
			graph.Release(d.Root, func(cas.ID) int64 { return 0 })
		}
	}
	res.plan = plan
	return graph, nil
}

// applyDrops deletes the snapshots plan drops (on a bucket with a dropped
// marker each, markDropped) and the projects it forgets: the drop of
// collect, the size cap and prune on both stores.
func (s *Store) applyDrops(ctx context.Context, tx *index.Tx, plan gc.Plan, records map[cas.ID]record) error {
	for _, d := range plan.Drops {
		if err := tx.DeleteSnapshot(records[d.ID]); err != nil {
			return err
		}
		if err := s.markDropped(ctx, tx, d.ID); err != nil {
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

// markProjects marks every object the snapshots of projects reach.
func markProjects(ctx context.Context, objects *cas.Store, projects []gc.Project) (*gc.Graph, error) {
	var roots []cas.ID
	for _, p := range projects {
		for _, s := range p.Snapshots {
			roots = append(roots, s.Root)
		}
	}
	return gc.Mark(ctx, objects, roots)
}

// storedSize returns the size of an object as stored in its pack, for the
// size cap's plan (gc.CapInput.Size): 0 for one objects cannot locate.
func storedSize(objects *cas.Store) func(cas.ID) int64 {
	return func(id cas.ID) int64 {
		l, err := objects.Locate(id)
		if err != nil {
			return 0
		}
		return l.PackBytes()
	}
}

// dropAndSweep deletes what plan drops and prepares the sweep of every
// object no kept snapshot reaches.
func (ss *session) dropAndSweep(ctx context.Context, tx *index.Tx, objects *cas.Store, req collectRequest, graph *gc.Graph, records map[cas.ID]record, plan gc.Plan) (*cas.Sweep, error) {
	if err := ss.s.applyDrops(ctx, tx, plan, records); err != nil {
		return nil, err
	}
	dead := func(id cas.ID) bool { return !graph.Live(id) }
	if _, err := tx.DropStatEntries(dead); err != nil {
		return nil, err
	}
	if _, err := tx.DropChangeCounts(dead, manifest.EmptyTreeID); err != nil {
		return nil, err
	}
	var opts cas.SweepOptions
	if req.cap > 0 {
		opts.RepackThreshold = -1 // the cap is a promise: return every dead byte
	}
	backups := liveBackups(records, plan)
	if err := addTurnBackups(tx, backups); err != nil {
		return nil, err
	}
	live := func(id cas.ID) bool { return graph.Live(id) || backups[id] }
	if err := updateTombstones(ctx, tx, objects, ss.s.packs); err != nil {
		return nil, err
	}
	opts.Required, opts.RequiredCount = graph.Live, graph.Objects()
	sweep, err := cas.PrepareSweep(ctx, tx.Objects(), ss.s.packs, live, opts)
	if errors.Is(err, cas.ErrLiveNotIndexed) {
		if detail := checkLiveIndexed(graph, objects); detail != nil {
			err = detail
		}
	}
	return sweep, err
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
	lock, err := lockStore(ctx, s.lockPath(), true, time.Now(), 0)
	if err != nil {
		return
	}
	ss := &session{s: s, lock: lock}
	defer ss.end()
	if s.remote != nil {
		if _, err := ss.remoteCollect(ctx); err != nil {
			s.opts.Logger.Debug("automatic gc of the bucket postponed", "err", err)
		}
		return
	}
	if _, err := ss.collect(ctx, collectRequest{}); err != nil {
		s.opts.Logger.Debug("automatic garbage collection postponed", "err", err)
	}
}

// loadProjects reads every project with its snapshots for retention.
func loadProjects(tx *index.Tx) ([]gc.Project, map[cas.ID]record, error) {
	records := map[cas.ID]record{}
	var out []gc.Project
	err := tx.EachProject(func(ps index.ProjectSnapshots) error {
		p := gc.Project{Workdir: ps.Workdir, LastTouch: ps.LastTouch, State: projectState(ps.Project)}
		for _, s := range ps.Snapshots {
			records[s.ID] = s
			p.Snapshots = append(p.Snapshots, gc.Snapshot{ID: s.ID, Root: s.Root, Time: s.Time, Pinned: s.Pinned})
		}
		out = append(out, p)
		return nil
	})
	return out, records, err
}

// checkLiveIndexed refuses a sweep when the index lacks an object that a
// kept snapshot needs, naming how many and one of them (a local sweep
// learns that it does from cas.ErrLiveNotIndexed, in its one pass over
// the index). The index then is damaged (a lost key would make the sweep
// take the object for garbage and delete its pack) or the object is
// lost: either way nothing may be deleted before a repair.
func checkLiveIndexed(graph *gc.Graph, objects *cas.Store) error {
	missing, example := 0, cas.ID{}
	err := graph.EachLive(func(id cas.ID) error {
		has, err := objects.Has(id)
		if err == nil && !has {
			missing++
			example = id
		}
		return err
	})
	if err != nil {
		return err
	}
	if missing > 0 {
		return fmt.Errorf("gc: the index lacks %d objects that kept snapshots need (%s among them), so nothing is deleted; run casckpt repair, then casckpt verify, and forget the snapshots it names damaged", missing, example.Short())
	}
	return nil
}

// updateTombstones brings the tombstones of the record backups of deleted
// snapshots and turns up to date before a sweep. Dead objects leave the
// index at a sweep but stay in their pack until it is rewritten, so a new
// tombstone's pack is looked up now, while the backup is still indexed,
// and remembered (dead objects never move); a tombstone is dropped once
// its pack is gone from the index and the disk.
func updateTombstones(ctx context.Context, tx *index.Tx, objects *cas.Store, packs cas.PackStore) error {
	tombstones, err := tx.Tombstones()
	if err != nil {
		return err
	}
	infos, err := tx.Objects().Packs()
	if err != nil {
		return err
	}
	names := make(map[uint32][16]byte, len(infos))
	indexed := make(map[[16]byte]bool, len(infos))
	for _, p := range infos {
		names[p.Number] = p.Name
		indexed[p.Name] = true
	}
	for id, pack := range tombstones {
		switch {
		case pack == [16]byte{}:
			if l, lerr := objects.Locate(id); lerr == nil {
				err = tx.SetTombstone(id, names[l.Pack])
			} else {
				err = tx.DeleteTombstone(id) // in no indexed pack: it never was
			}
		case !indexed[pack]:
			if _, serr := packs.Stat(ctx, cas.PackInfo{Name: pack}.FileName()); errors.Is(serr, fs.ErrNotExist) {
				err = tx.DeleteTombstone(id)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// liveBackups returns the record backups of the snapshots that plan keeps.
func liveBackups(records map[cas.ID]record, plan gc.Plan) map[cas.ID]bool {
	live := make(map[cas.ID]bool, len(records))
	for _, r := range records {
		if !r.BackupID.IsZero() {
			live[r.BackupID] = true
		}
	}
	for _, d := range plan.Drops {
		delete(live, records[d.ID].BackupID)
	}
	return live
}

// addTurnBackups adds to live the backups of the turn records in tx: those
// that the drops left (a turn goes with the last of its snapshots).
func addTurnBackups(tx *index.Tx, live map[cas.ID]bool) error {
	projects, err := tx.Projects()
	if err != nil {
		return err
	}
	for _, p := range projects {
		turns, err := tx.Turns(p.Workdir)
		if err != nil {
			return err
		}
		for _, tr := range turns {
			if !tr.BackupID.IsZero() {
				live[tr.BackupID] = true
			}
		}
	}
	return nil
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
