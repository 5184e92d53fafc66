package casckpt

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

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
}

// collectResult says what a collection dropped and freed.
type collectResult struct {
	plan           gc.Plan
	projects       int
	objectsDeleted int
	bytesFreed     int64
	projected      int64
	fits           bool
}

var errRollback = errors.New("dry run")

// collect applies retention and the size cap, then sweeps, in one write
// transaction. The caller holds the exclusive store lock.
func (ss *session) collect(ctx context.Context, req collectRequest) (collectResult, error) {
	var res collectResult
	if ss.lock == nil || !ss.s.exists() {
		// No store, or none when the session began (so it holds no lock,
		// and one made since may hold packs a writer has not committed).
		return collectResult{fits: true}, nil
	}
	now := ss.s.opts.Now()
	var sweep *cas.Sweep
	err := ss.update(func(tx *bolt.Tx) error {
		projects, records, err := loadProjects(tx)
		if err != nil {
			return err
		}
		res.projects = len(projects)
		objects := cas.NewStore(ss.s.packsDir(), tx)
		defer objects.Close()
		var roots []cas.ID
		for _, p := range projects {
			for _, s := range p.Snapshots {
				roots = append(roots, s.Root)
			}
		}
		graph, err := gc.Mark(ctx, objects, roots)
		if err != nil {
			return fmt.Errorf("%w; run casckpt verify and forget the damaged snapshots", err)
		}
		plan := gc.PlanRetention(projects, req.policy, now)
		res.fits = true
		if req.cap > 0 {
			dbSize, err := fileSize(ss.s.dbPath())
			if err != nil {
				return err
			}
			size := func(id cas.ID) int64 {
				l, err := objects.Locate(id)
				if err != nil {
					return 0
				}
				return int64(l.StoredLen) + objectOverhead
			}
			plan, res.projected, res.fits = gc.PlanCap(plan, gc.CapInput{
				Projects: projects, Graph: graph, Size: size, Fixed: dbSize,
				Cap: req.cap, Protect: req.protect, Current: req.current,
			})
		} else {
			for _, d := range plan.Drops {
				graph.Release(d.Root, func(cas.ID) int64 { return 0 })
			}
		}
		res.plan = plan
		if req.dryRun {
			return errRollback
		}
		for _, d := range plan.Drops {
			if err := index.DeleteSnapshot(tx, records[d.ID]); err != nil {
				return err
			}
		}
		for _, w := range plan.Forget {
			if err := index.DeleteProject(tx, w); err != nil {
				return err
			}
		}
		dead := func(id cas.ID) bool { return !graph.Live(id) }
		if _, err := index.DropStatEntries(tx, dead); err != nil {
			return err
		}
		opts := cas.SweepOptions{FS: ss.s.packFS}
		if req.cap > 0 {
			opts.RepackThreshold = -1 // the cap is a promise: return every dead byte
		}
		copies := liveCopies(records, plan)
		live := func(id cas.ID) bool { return graph.Live(id) || copies[id] }
		if err := checkLiveIndexed(graph, objects); err != nil {
			return err
		}
		if err := updateDroppedList(tx, objects, ss.s.packsDir()); err != nil {
			return err
		}
		sweep, err = cas.PrepareSweep(ctx, tx, ss.s.packsDir(), live, opts)
		if err != nil {
			return err
		}
		res.objectsDeleted = sweep.ObjectsDeleted
		if err := index.PutMeta(tx, metaPendingDrops, nil); err != nil {
			return err
		}
		if req.markRun {
			return index.PutMeta(tx, metaLastPrune, binary.BigEndian.AppendUint64(nil, uint64(now.UnixNano())))
		}
		return nil
	})
	if errors.Is(err, errRollback) {
		return res, nil
	}
	if err != nil {
		if sweep != nil {
			sweep.Abort()
		}
		return res, err
	}
	res.bytesFreed, err = sweep.Finish()
	if err != nil {
		err = fmt.Errorf("gc: no snapshot is harmed, but unused packs could not be deleted (%w); the next gc deletes them", err)
	}
	return res, err
}

// objectOverhead is what a pack spends on an object besides its bytes: the
// object header and its table entry.
const objectOverhead = 44 + 46

const (
	metaLastPrune    = "prune.last"
	metaPendingDrops = "gc.pending" // snapshots dropped since the last collection
)

// autoCollectAfter is how many dropped snapshots make a snapshot collect the
// garbage on its way out, so a store under keep-N does not keep growing.
const autoCollectAfter = 8

// addPendingDrops counts snapshots dropped without collecting.
func addPendingDrops(tx *bolt.Tx, n int) error {
	if n == 0 {
		return nil
	}
	return index.PutMeta(tx, metaPendingDrops, binary.AppendUvarint(nil, pendingDrops(tx)+uint64(n)))
}

func pendingDrops(tx *bolt.Tx) uint64 {
	v, _ := binary.Uvarint(index.GetMeta(tx, metaPendingDrops))
	return v
}

// collectIfDue collects garbage when enough snapshots were dropped since
// the last collection and no other process is using the store: it never
// waits, and a failure only postpones the work to the next call.
func (s *Store) collectIfDue(ctx context.Context) {
	due := false
	_ = s.read(ctx, func(ss *session) error {
		due = ss.tx != nil && pendingDrops(ss.tx) >= autoCollectAfter
		return nil
	})
	if !due {
		return
	}
	lock, err := lockStore(ctx, s.lockPath(), true, time.Now(), 0)
	if err != nil {
		return
	}
	ss := &session{s: s, lock: lock, objects: cas.NewStore(s.packsDir(), nil)}
	defer ss.end()
	if _, err := ss.collect(ctx, collectRequest{}); err != nil {
		s.opts.Logger.Debug("automatic garbage collection postponed", "err", err)
	}
}

// loadProjects reads every project with its snapshots for retention.
func loadProjects(tx *bolt.Tx) ([]gc.Project, map[cas.ID]Snapshot, error) {
	recs, err := index.Projects(tx)
	if err != nil {
		return nil, nil, err
	}
	records := map[cas.ID]Snapshot{}
	var out []gc.Project
	for _, r := range recs {
		snaps, err := index.Snapshots(tx, r.Workdir)
		if err != nil {
			return nil, nil, err
		}
		p := gc.Project{Workdir: r.Workdir, LastTouch: r.LastTouch, Exists: dirExists(r.Workdir)}
		for _, s := range snaps {
			records[s.ID] = s
			p.Snapshots = append(p.Snapshots, gc.Snapshot{ID: s.ID, Root: s.Root, Time: s.Time, Pinned: s.Pinned})
		}
		out = append(out, p)
	}
	return out, records, nil
}

// checkLiveIndexed refuses a sweep when the index lacks an object that a
// kept snapshot needs. The index then is damaged (a lost key would make
// the sweep take the object for garbage and delete its pack) or the
// object is lost: either way nothing may be deleted before a repair.
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

// updateDroppedList brings the list of dropped snapshots' record copies
// up to date before a sweep. Dead objects leave the index at a sweep but
// stay in their pack until it is rewritten, so a newly dropped copy's pack
// is looked up now, while the copy is still indexed, and remembered (dead
// objects never move); a copy is taken off the list once its pack file is
// gone from the index and the disk.
func updateDroppedList(tx *bolt.Tx, objects *cas.Store, packsDir string) error {
	dropped, err := index.Dropped(tx)
	if err != nil {
		return err
	}
	packs, err := cas.Packs(tx)
	if err != nil {
		return err
	}
	names := make(map[uint32][16]byte, len(packs))
	indexed := make(map[[16]byte]bool, len(packs))
	for _, p := range packs {
		names[p.Number] = p.Name
		indexed[p.Name] = true
	}
	for id, pack := range dropped {
		switch {
		case pack == [16]byte{}:
			if l, lerr := objects.Locate(id); lerr == nil {
				err = index.SetDropped(tx, id, names[l.Pack])
			} else {
				err = index.DeleteDropped(tx, id) // in no indexed pack: it never was
			}
		case !indexed[pack]:
			if _, serr := os.Stat(filepath.Join(packsDir, cas.PackInfo{Name: pack}.FileName())); errors.Is(serr, fs.ErrNotExist) {
				err = index.DeleteDropped(tx, id)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// liveCopies returns the record copies of the snapshots that plan keeps.
func liveCopies(records map[cas.ID]Snapshot, plan gc.Plan) map[cas.ID]bool {
	live := make(map[cas.ID]bool, len(records))
	for _, r := range records {
		if !r.RecordID.IsZero() {
			live[r.RecordID] = true
		}
	}
	for _, d := range plan.Drops {
		delete(live, records[d.ID].RecordID)
	}
	return live
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
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

// GCResult says what garbage collection freed.
type GCResult struct {
	ObjectsDeleted int
	BytesFreed     int64
}

// GC deletes every stored object no snapshot reaches and returns the space:
// dead packs are deleted, mostly dead ones rewritten. It waits for running
// snapshots and restores to finish and holds them off while it runs.
func (s *Store) GC(ctx context.Context) (GCResult, error) {
	ss, err := s.begin(ctx, true, false)
	if err != nil {
		return GCResult{}, err
	}
	defer ss.end()
	res, err := ss.collect(ctx, collectRequest{})
	return GCResult{ObjectsDeleted: res.objectsDeleted, BytesFreed: res.bytesFreed}, err
}

// PruneOptions are the rules of a prune. The zero value drops only orphans.
type PruneOptions struct {
	// StaleAfter drops projects not touched for this long (0: never).
	StaleAfter time.Duration
	// KeepOrphans keeps projects whose directory is gone.
	KeepOrphans bool
	// MaxSize is the store's size cap in bytes (0: none).
	MaxSize int64
	// MinInterval, when positive, skips the prune if the last one ran
	// less than this long ago (for host start-up hooks).
	MinInterval time.Duration
	// DryRun reports what would be dropped and changes nothing.
	DryRun bool
}

// PruneResult says what a prune did (or would do).
type PruneResult struct {
	Skipped          bool
	Scanned          int // projects examined
	DeletedOrphan    int // projects removed because their directory is gone
	DeletedStale     int // projects removed because untouched too long
	SnapshotsDropped int
	BytesFreed       int64
	// CapMet is false when the size cap could not be met (pinned snapshots
	// need more room).
	CapMet bool
	Plan   gc.Plan
}

// Prune drops orphan and stale projects, applies the size cap and collects
// the garbage, so the space is returned before it returns.
func (s *Store) Prune(ctx context.Context, opts PruneOptions) (PruneResult, error) {
	if opts.MinInterval > 0 {
		last, err := s.lastPrune(ctx)
		if err != nil {
			return PruneResult{}, err
		}
		if !last.IsZero() && s.opts.Now().Sub(last) < opts.MinInterval {
			return PruneResult{Skipped: true, CapMet: true, Plan: gc.Plan{Drops: []gc.Drop{}, Forget: []string{}}}, nil
		}
	}
	ss, err := s.begin(ctx, true, false)
	if err != nil {
		return PruneResult{}, err
	}
	defer ss.end()
	res, err := ss.collectToCap(ctx, collectRequest{
		policy:  gc.Policy{StaleAfter: opts.StaleAfter, DropOrphans: !opts.KeepOrphans},
		cap:     opts.MaxSize,
		dryRun:  opts.DryRun,
		markRun: true,
	})
	out := PruneResult{Scanned: res.projects, SnapshotsDropped: len(res.plan.Drops), BytesFreed: res.bytesFreed, CapMet: res.fits, Plan: res.plan}
	why := map[string]gc.Why{} // the rule that emptied each forgotten project
	for _, d := range res.plan.Drops {
		if d.Why == gc.WhyOrphan || d.Why == gc.WhyStale {
			why[d.Project] = d.Why
		}
	}
	for _, w := range res.plan.Forget {
		switch why[w] {
		case gc.WhyOrphan:
			out.DeletedOrphan++
		case gc.WhyStale:
			out.DeletedStale++
		}
	}
	return out, err
}

func (s *Store) lastPrune(ctx context.Context) (time.Time, error) {
	var last time.Time
	err := s.read(ctx, func(ss *session) error {
		if ss.tx == nil {
			return nil
		}
		if v := index.GetMeta(ss.tx, metaLastPrune); len(v) == 8 {
			last = time.Unix(0, int64(binary.BigEndian.Uint64(v)))
		}
		return nil
	})
	return last, err
}

// DefaultMaxStoreSize is the size cap Snapshot applies by default.
const DefaultMaxStoreSize = 500 << 20

// enforceCap frees space after a snapshot if the store is over its cap. The
// caller holds no lock. The store's size is its packs, as the snapshot's
// commit counted them, and its database: no walk of the directory.
func (s *Store) enforceCap(ctx context.Context, limit int64, just SnapshotResult) (collectResult, error) {
	db, err := fileSize(s.dbPath())
	if err != nil || just.packBytes+db <= limit {
		return collectResult{fits: true}, err
	}
	ss, err := s.begin(ctx, true, false)
	if err != nil {
		return collectResult{}, err
	}
	defer ss.end()
	return ss.collectToCap(ctx, collectRequest{cap: limit, protect: just.ID, current: just.Project})
}

// collectToCap collects as collect does and then measures the store on
// disk (allocated blocks included, as du counts them): the plan counts
// object bytes, but pack rounding and a database that grew while it
// committed can still leave the store a little over. It then aims lower,
// so that the cap holds on disk too.
func (ss *session) collectToCap(ctx context.Context, req collectRequest) (collectResult, error) {
	res, err := ss.collect(ctx, req)
	if err != nil || req.cap <= 0 || req.dryRun {
		return res, err
	}
	target := req.cap
	for range 3 {
		used, err := diskUsage(ss.s.dir)
		if err != nil || used <= req.cap || !res.fits {
			return res, err
		}
		target -= used - req.cap + 64<<10
		more, err := ss.collect(ctx, collectRequest{cap: target, protect: req.protect, current: req.current})
		res.plan.Drops = append(res.plan.Drops, more.plan.Drops...)
		res.plan.Forget = append(res.plan.Forget, more.plan.Forget...)
		res.bytesFreed += more.bytesFreed
		res.objectsDeleted += more.objectsDeleted
		res.projected, res.fits = more.projected, more.fits
		if err != nil {
			return res, err
		}
	}
	used, err := diskUsage(ss.s.dir)
	res.fits = res.fits && used <= req.cap
	return res, err
}

// DamagedSnapshot is a snapshot Verify found missing data for.
type DamagedSnapshot struct {
	Project string
	ID      cas.ID
	Reason  string
}

// VerifyResult says what Verify checked and found.
type VerifyResult struct {
	SnapshotsChecked int
	ObjectsChecked   int
	Damaged          []DamagedSnapshot
}

// Verify reads every tree and chunk every snapshot refers to and checks it
// against its hash. Each object is read once.
func (s *Store) Verify(ctx context.Context) (VerifyResult, error) {
	res := VerifyResult{Damaged: []DamagedSnapshot{}}
	err := s.read(ctx, func(ss *session) error {
		if ss.tx == nil {
			return nil
		}
		projects, err := index.Projects(ss.tx)
		if err != nil {
			return err
		}
		checked := map[cas.ID]error{}
		trees := map[cas.ID]error{}
		copies := 0
		check := func(id cas.ID) error {
			if err, ok := checked[id]; ok {
				return err
			}
			_, err := ss.objects.Get(ctx, id)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			checked[id] = err
			return err
		}
		for _, p := range projects {
			snaps, err := index.Snapshots(ss.tx, p.Workdir)
			if err != nil {
				return err
			}
			for _, sn := range snaps {
				res.SnapshotsChecked++
				err := verifySnapshot(ctx, ss, sn, check, trees)
				if err == nil && !sn.RecordID.IsZero() {
					copies++
					err = verifyCopy(ctx, ss, sn)
				}
				if err != nil {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					res.Damaged = append(res.Damaged, DamagedSnapshot{Project: p.Workdir, ID: sn.ID, Reason: err.Error()})
				}
			}
		}
		res.ObjectsChecked = len(checked) + len(trees) + copies
		return nil
	})
	return res, err
}

// verifyCopy checks that the copy of sn's record stored in the packs (for
// repair) is there and says what the record says.
func verifyCopy(ctx context.Context, ss *session, sn Snapshot) error {
	b, err := ss.objects.Get(ctx, sn.RecordID)
	if err != nil {
		return fmt.Errorf("the copy of its record: %w", err)
	}
	c, _, err := index.DecodeCopy(b)
	if err != nil {
		return fmt.Errorf("the copy of its record: %w", err)
	}
	if c.ID != sn.ID || c.Project != sn.Project || c.Root != sn.Root || !c.Time.Equal(sn.Time) || c.Reason != sn.Reason {
		return fmt.Errorf("the copy of its record says otherwise")
	}
	return nil
}

// verifySnapshot checks every object below sn's root. check verifies one
// object; trees memoizes whole subtrees already found intact or damaged.
func verifySnapshot(ctx context.Context, ss *session, sn Snapshot, check func(cas.ID) error, trees map[cas.ID]error) error {
	var walk func(id cas.ID, dir string) error
	walk = func(id cas.ID, dir string) error {
		if err, ok := trees[id]; ok {
			return err
		}
		err := func() error {
			t, err := manifest.Load(ctx, ss.objects, id)
			if err != nil {
				return fmt.Errorf("directory %s: %w", dir, err)
			}
			for _, e := range t.Entries {
				p := path.Join(dir, e.Name)
				for _, c := range e.Chunks {
					if err := check(c); err != nil {
						return fmt.Errorf("%s: %w", p, err)
					}
				}
				if e.Kind == manifest.KindDir {
					if err := walk(e.Tree, p); err != nil {
						return err
					}
				}
			}
			return nil
		}()
		trees[id] = err
		return err
	}
	return walk(sn.Root, "/")
}
