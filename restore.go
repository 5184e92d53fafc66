package casckpt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/internal/osfs"
	"github.com/casckpt/casckpt/internal/restorer"
	"github.com/casckpt/casckpt/internal/scan"
	"github.com/casckpt/casckpt/internal/statcache"
	"github.com/casckpt/casckpt/manifest"
)

// RestoreOptions tune Restore. The zero value restores the whole tree.
type RestoreOptions struct {
	// Paths, relative to the project directory, restricts the restore to
	// these files or directories.
	Paths []string
	// DryRun computes what would change and changes nothing, taking no
	// pre-restore snapshot.
	DryRun bool
	// MaxFileSize and MaxFiles are the exclusion limits, as in
	// SnapshotOptions; paths they exclude that the snapshot lacks are
	// never touched. MaxFileSize defaults to the limit the snapshot was
	// taken with, so a file it left out as too large is never deleted;
	// the snapshot's SnapshotOptions.Exclude and MaxDirFiles apply too.
	MaxFileSize int64
	MaxFiles    int
	// Progress, if set, is called as files and links are written, from any
	// goroutine: first with nothing done, last with everything done.
	// Totals count the files and links to write and their bytes.
	Progress func(filesDone, filesTotal, bytesDone, bytesTotal int64)
	// Safe restores only what agents changed (within Paths): a path that
	// differs from the snapshot is restored when its current state is one
	// an agent left it in since the snapshot, at the end of the newest
	// turn that changed it or as RecordWrite last recorded it; every other
	// one is kept and listed in RestoreResult.Kept (a path excluded now
	// with the reason ReasonExcludedNow). When the store knows of no turn
	// ended and no write recorded since the snapshot, everything is
	// restored (RestoreResult.Safe is then false).
	Safe bool
	// Fallback: when snapshot ref's data is damaged (a missing or corrupt
	// tree or chunk anywhere in it), the newest older snapshot of the
	// project whose whole tree is intact is restored instead, trying each
	// in turn: RestoreResult.RestoredTo is the one used, Tried those passed
	// over. Every candidate's whole tree is read and verified before
	// anything is written; when none is left the error is a
	// *NoIntactError and nothing was changed.
	Fallback bool
	// BeforeApply, if set, is called once everything is planned and
	// verified and the pre-restore snapshot is taken, right before the
	// working tree is changed (tests change the tree there).
	BeforeApply func()
	// KeepOld, if set, is given each regular file the restore replaces
	// or deletes, open (read-only), right before it is unlinked: its
	// blocks are freed when it is closed, which is then the caller's, not
	// while the restore runs. A file system that discards freed blocks at
	// once (ext4 mounted with discard and without a journal, as the VMs
	// agents run in are) waits on the disk for each, 1-4 ms a file. An
	// *os.File underlies each (its Fd method gives its descriptor).
	KeepOld func(old io.Closer)
}

// RestoreResult says what Restore did (or, in a dry run, would do).
type RestoreResult struct {
	RestoredTo   cas.ID
	PreRestoreID cas.ID // zero when no pre-restore snapshot was taken
	Written      int    // files and links written
	Deleted      int    // files and links deleted
	DryRun       bool
	// Changes is the plan: every path written or deleted, in order.
	Changes []manifest.Change
	// Skipped names paths left alone because an excluded entry (ignored,
	// over the size limit, unreadable) the snapshot lacks is in the way,
	// or because they changed after the scan (those are in Changed too).
	Skipped []string
	// Changed names the paths left alone because they changed after the
	// scan (someone saved them while the restore ran), in no particular
	// order: ReasonChangedDuring. Never nil.
	Changed []string
	// Safe is set when a safe restore restored only what agents changed;
	// false when it fell back to restoring everything, knowing nothing of
	// agents since the snapshot.
	Safe bool
	// Kept are the paths a safe restore left as they are, in plan order,
	// with why, then those the file system cannot hold (in Skipped too).
	// Never nil.
	Kept []KeptPath
	// Tried are the snapshots a fallback passed over, newest first
	// (RestoreOptions.Fallback). Never nil.
	Tried []TriedSnapshot
}

// ReasonChangedDuring is why restore and undo leave alone a path that
// changed after their scan: "changed during restore".
const ReasonChangedDuring = restorer.ReasonChangedDuring

// PreRestorePrefix starts the reason of every pre-restore snapshot.
const PreRestorePrefix = "pre-restore"

// Restore makes the project's working tree (or the given paths) equal to
// snapshot ref: every entry of the snapshot is written with its bytes,
// executable bit and link target, and every path a snapshot would capture
// that the snapshot lacks is deleted. Excluded paths the snapshot lacks
// are never touched (a path it holds is restored even if excluded now:
// the pre-restore snapshot holds what is there, whatever its size) and
// nothing is written outside the project directory, whatever links it
// holds. Files that already match are left as they are. It reads and
// verifies every tree and chunk it needs, stores again from the working
// tree the stored copies of what it overwrites or deletes that are
// damaged (see heal; the restore is refused, changing nothing, when it
// cannot), then takes a pre-restore snapshot, and replaces each file atomically with a new one (never
// changing an inode in place), right after checking that it is as the
// scan found it (one that changed is left alone, in Changed). Restores and
// undos of one project run one at a time. Temporary files of killed
// restores are removed. With opts.Safe only what agents changed is
// restored. On a bucket store with Options.ReadMachine, ref is a snapshot
// of that machine's project at the same path (the pre-restore snapshot is
// this machine's).
func (s *Store) Restore(ctx context.Context, dir string, ref Ref, opts RestoreOptions) (RestoreResult, error) {
	res := RestoreResult{DryRun: opts.DryRun, Kept: []KeptPath{}, Changed: []string{}, Tried: []TriedSnapshot{}}
	workdir, err := Workdir(dir)
	if err != nil {
		return res, err
	}
	paths, err := cleanRestorePaths(opts.Paths)
	if err != nil {
		return res, err
	}
	ss, err := s.begin(ctx, false, !opts.DryRun)
	if err != nil {
		return res, err
	}
	defer ss.End()
	if !opts.DryRun {
		unlock, err := ss.lockProject(ctx, workdir)
		if err != nil {
			return res, err
		}
		defer unlock()
	}
	var plan plannedRestore
	res.PreRestoreID, err = ss.changeTree(ctx, opts.DryRun, PreRestorePrefix, func(v view) (p *pendingSnapshot, err error) {
		p, plan, err = ss.prepareRestore(ctx, v, &res, workdir, ref, paths, opts)
		return p, err
	}, func(v view) error {
		left, err := ss.s.apply(ctx, workdir, plan.verified.Getter(v.Objects), plan.Plan, plan.current, applyOptions{opts.Progress, opts.KeepOld})
		done := plan.Without(left)
		res.Changes, res.Written, res.Deleted = done.Changes, done.Written, done.Deleted
		res.Skipped, res.Changed = append(res.Skipped, left...), append(res.Changed, left...)
		if opts.Safe && res.Safe {
			for _, p := range left {
				res.Kept = append(res.Kept, KeptPath{Path: p, Reason: ReasonChangedDuring})
			}
		}
		return err
	}, opts.BeforeApply)
	err = ss.recheckMissing(ctx, err)
	if err == nil && !opts.DryRun {
		if err = ss.recordOwnWrites(ctx, workdir, res.Changes); err != nil {
			err = fmt.Errorf("restored, but recording the restore's writes failed: %w", err)
		}
	}
	return res, err
}

// changeTree carries out an operation that rewrites the working tree, as
// Restore and Undo do. prepare plans it in one read view and returns the
// uncommitted snapshot of the tree as it is; unless dryRun, that snapshot
// is committed (errors name it by what, e.g. "pre-restore"), before (if
// not nil) is called, in no transaction, and write then writes the plan in
// a new read view. It returns the snapshot's ID, zero when none was taken
// (a dry run, or a tree equal to the newest snapshot).
func (ss *hold) changeTree(ctx context.Context, dryRun bool, what string, prepare func(v view) (*pendingSnapshot, error), write func(v view) error, before func()) (ID, error) {
	var pending *pendingSnapshot
	err := ss.Read(func(v view) (err error) {
		pending, err = prepare(v)
		return err
	})
	if err != nil || dryRun {
		return ID{}, err
	}
	pre, err := ss.commitSnapshot(ctx, pending)
	if err != nil {
		return ID{}, fmt.Errorf("%s snapshot: %w", what, err)
	}
	var id ID
	if pre.Created {
		id = pre.ID
	}
	if before != nil {
		before()
	}
	return id, ss.Read(write)
}

// scanBefore scans the working tree once, keeping its trees in overlay:
// in a dry run only hashed, else stored as a pending snapshot with opts
// (the tree from before the operation, committed once it is verified).
// The Result keeps the tree as the scan saw it, which apply reads.
func (ss *hold) scanBefore(ctx context.Context, v view, workdir string, overlay *treeOverlay, dryRun bool, opts SnapshotOptions) (scan.Result, *pendingSnapshot, error) {
	opts.keepTree = true
	if dryRun {
		o := ss.s.listOptions(opts)
		o.Cache, o.Trees = v.Tx.StatCache(workdir), v.Objects
		current, err := scan.Scan(ctx, workdir, overlay, o)
		return current, nil, err
	}
	pending, err := ss.scanSnapshot(ctx, v, workdir, opts, listing{}, overlay.through)
	if err != nil {
		return scan.Result{}, nil, err
	}
	return pending.scanned, pending, nil
}

// prepareRestore resolves the snapshot, checks that it is whole, scans the
// current tree and plans the restore (summed up in res), reading and
// verifying every chunk the plan writes. The scan captures the excluded
// entries that the snapshot holds (so the restore writes over nothing
// that its snapshot from before lacks). Outside a dry run the scan stores
// the current tree as the pre-restore snapshot, returned uncommitted: it
// is committed only once everything the plan writes has been read and
// verified, so a refused restore changes nothing, not even the list of
// snapshots.
func (ss *hold) prepareRestore(ctx context.Context, v view, res *RestoreResult, workdir string, ref Ref, paths []string, opts RestoreOptions) (*pendingSnapshot, plannedRestore, error) {
	from := ss.s.machineWorkdir(workdir) // another machine's project with Options.ReadMachine
	if from != workdir && opts.Safe {
		return nil, plannedRestore{}, fmt.Errorf("%w: --safe keeps what this machine's agents did not write, which says nothing of another machine's snapshot: restore it without --safe", ErrRefused)
	}
	snaps, err := v.Tx.Snapshots(from)
	if err != nil {
		return nil, plannedRestore{}, err
	}
	target, err := restoreTarget(ctx, v, snaps, ref, workdir, opts.Fallback, res)
	if err != nil {
		return nil, plannedRestore{}, err
	}
	res.RestoredTo = target.ID
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = target.MaxFileSize
	}
	for _, p := range paths {
		if _, err := manifest.Lookup(ctx, v.Objects, target.Root, p); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, plannedRestore{}, fmt.Errorf("restore %s: %w in snapshot %s", p, ErrNotFound, target.ID.Short())
			}
			return nil, plannedRestore{}, refuseDamaged(ctx, v, snaps, target, err)
		}
	}
	// The snapshot's root must be readable; the rest is checked as the
	// plan reads it: every tree that differs from the current one is read
	// and verified by the diff, and every chunk to be written below. What
	// the snapshot shares with the current tree is stored by the
	// pre-restore snapshot and never needs reading.
	if _, err := manifest.Load(ctx, v.Objects, target.Root); err != nil {
		return nil, plannedRestore{}, refuseDamaged(ctx, v, snaps, target, err)
	}
	var prov *provenance
	if opts.Safe {
		p, err := loadProvenance(v.Tx, workdir, snaps, target)
		if err != nil {
			return nil, plannedRestore{}, err
		}
		if p.known {
			prov, res.Safe = &p, true
		}
	}
	overlay := newTreeOverlay(v.Objects)
	excludedNow := newCapture(ctx, v.Objects, target.Root)
	current, pending, err := ss.scanBefore(ctx, v, workdir, overlay, opts.DryRun, SnapshotOptions{
		Reason:      fmt.Sprintf("%s: before restoring %s", PreRestorePrefix, target.ID.Short()),
		Keep:        -1, // a restore never drops snapshots
		MaxFileSize: opts.MaxFileSize, MaxFiles: opts.MaxFiles,
		Exclude: target.Exclude, MaxDirFiles: target.MaxDirFiles, // what it left out is left alone
		capture: excludedNow.capture,
	})
	if err != nil && !opts.DryRun {
		err = fmt.Errorf("pre-restore snapshot: %w", err)
	}
	if err != nil {
		return nil, plannedRestore{}, err
	}
	plan, verified, kept, err := planRestore(ctx, v.Objects, overlay, workdir, current, target, paths, prov, excludedNow.captured())
	res.Changes, res.Skipped, res.Written, res.Deleted = plan.Changes, plan.Skipped, plan.Written, plan.Deleted
	res.Kept = kept
	if err != nil {
		err = refuseDamaged(ctx, v, snaps, target, err)
	} else if pending != nil {
		err = ss.heal(ctx, v, pending, overlay, current.Root, plan.Changes)
	}
	if err != nil {
		if pending != nil {
			pending.abort()
		}
		return nil, plannedRestore{}, err
	}
	return pending, plannedRestore{plan, current, verified}, nil
}

// plannedRestore is a restore's plan with what Apply needs besides: the
// scan the plan was made from and the chunks read to verify it.
type plannedRestore struct {
	restorer.Plan
	current  scan.Result
	verified restorer.Verified
}

// restoreTarget resolves ref among snaps, the project's snapshots; with
// fallback, it returns the newest of it and those older whose whole tree
// is intact, and names those passed over in res.Tried.
func restoreTarget(ctx context.Context, v view, snaps []record, ref Ref, workdir string, fallbackOn bool, res *RestoreResult) (record, error) {
	target, i, err := resolve(snaps, ref, workdir)
	if err != nil || !fallbackOn {
		return target, err
	}
	check := newDataCheck(v.Objects)
	target, res.Tried, err = fallback(ctx, snaps[i:], workdirName(workdir), func(sn record) (string, error) {
		return damageReason(sn, check.snapshot(ctx, sn))
	})
	return target, err
}

// planRestore returns the changes that make the tree scanned as current
// equal to target (within paths), reading the current tree's objects from
// g, narrowed to what agents changed when prov is set (with the paths
// kept; those excludedNow holds, which the scan captured though excluded,
// with ReasonExcludedNow) and to what the file system can hold (the rest
// skipped and kept, with the restorer's reason), and reads and verifies
// from objects every chunk to be written (returning what it read).
func planRestore(ctx context.Context, objects, g cas.Getter, workdir string, current scan.Result, target record, paths []string, prov *provenance, excludedNow map[string]bool) (restorer.Plan, restorer.Verified, []KeptPath, error) {
	kept := []KeptPath{}
	changes, err := manifest.Diff(ctx, g, current.Root, target.Root)
	if err != nil {
		return restorer.Plan{}, restorer.Verified{}, kept, err
	}
	plan := restorer.NewPlan(changes, paths, current.Excluded, dirInProject(workdir))
	if prov != nil {
		if plan, kept, err = prov.safePlan(ctx, g, plan); err != nil {
			return restorer.Plan{}, restorer.Verified{}, []KeptPath{}, err
		}
		for i, k := range kept {
			if excludedNow[k.Path] {
				kept[i].Reason = ReasonExcludedNow
			}
		}
	}
	plan, unfit := hostPlatform(workdir).Fit(plan) // what this file system cannot hold
	for _, k := range unfit {
		plan.Skipped = append(plan.Skipped, k.Path)
		kept = append(kept, KeptPath(k))
	}
	verified, err := restorer.Verify(ctx, objects, plan)
	return plan, verified, kept, err
}

// hostPlatform is what the file system of a project directory cannot
// hold; tests replace it (OnPlatform).
var hostPlatform = restorer.HostPlatform

// apply carries out plan inside workdir through an os.Root (wrapped by
// s.projectFS), so no link in the tree can lead a write outside it,
// leaving alone (and returning) the paths that changed since they were
// scanned as scanned.
func (s *Store) apply(ctx context.Context, workdir string, g cas.Getter, plan restorer.Plan, scanned scan.Result, opts applyOptions) ([]string, error) {
	root, err := os.OpenRoot(workdir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var keepOld func(restorer.File)
	if opts.keepOld != nil {
		keepOld = func(f restorer.File) { opts.keepOld(f) }
	}
	return restorer.Apply(ctx, s.projectFS(root), g, plan, restorer.Options{
		Progress: opts.progress,
		KeepOld:  keepOld,
		SameFile: func(p string, now fs.FileInfo) bool {
			st, ok := osfs.FromInfo(now)
			want, captured := scanned.Stamp(p)
			return ok && captured && want == statcache.CurrentStamp(st.Size, st.Mtime, st.Ctime, st.Ino, st.Mode)
		},
	})
}

// applyOptions are what Restore and Undo ask of apply besides the plan:
// RestoreOptions.Progress and KeepOld.
type applyOptions struct {
	progress func(filesDone, filesTotal, bytesDone, bytesTotal int64)
	keepOld  func(old io.Closer)
}

// cleanRestorePaths checks restore paths; "." (or none) is the whole tree.
func cleanRestorePaths(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		c, err := relPath(p)
		if err != nil {
			return nil, err
		}
		if c == "" {
			return nil, nil
		}
		out = append(out, c)
	}
	return out, nil
}

// relPath cleans a path given relative to the project directory, refusing
// absolute paths and paths that lead outside. "." yields "".
func relPath(p string) (string, error) {
	if p == "" || filepath.IsAbs(p) {
		return "", fmt.Errorf("%w: path %q must be relative to the project directory", ErrRefused, p)
	}
	c := path.Clean(filepath.ToSlash(p))
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("%w: path %q leads outside the project directory", ErrRefused, p)
	}
	if c == "." {
		return "", nil
	}
	return c, nil
}

// dirInProject returns a function that reports whether p, relative to
// workdir, is a directory there (following no link).
func dirInProject(workdir string) func(p string) bool {
	return func(p string) bool {
		root, err := os.OpenRoot(workdir)
		if err != nil {
			return false
		}
		defer root.Close()
		st, err := root.Lstat(filepath.FromSlash(p))
		return err == nil && st.IsDir()
	}
}

// refuseDamaged explains that target cannot be restored and names the
// newest snapshot of the project that is complete.
func refuseDamaged(ctx context.Context, v view, snaps []record, target record, cause error) error {
	err := damaged(target, cause)
	if !errors.Is(err, ErrDamaged) {
		return err
	}
	check := newDataCheck(v.Objects)
	for _, sn := range snaps {
		if sn.ID != target.ID && check.snapshot(ctx, sn) == nil {
			return fmt.Errorf("%w; nothing was changed; the newest intact snapshot is %s", err, sn.ID)
		}
	}
	return fmt.Errorf("%w; nothing was changed; no intact snapshot of this project is left", err)
}

// targetCapture is what a restore's scan captures though excluded: the
// entries that the snapshot restored to holds (a directory where it holds
// one, a file or link where it holds either), which the restore would
// write over. It reads each tree of the snapshot once and is safe for
// concurrent use.
type targetCapture struct {
	ctx   context.Context
	g     cas.Getter
	root  cas.ID
	mu    sync.Mutex
	trees map[string]*manifest.Tree // by directory path; nil: none there
	taken map[string]bool
}

// newCapture returns the capture of the snapshot whose root tree is root.
func newCapture(ctx context.Context, g cas.Getter, root cas.ID) *targetCapture {
	return &targetCapture{ctx: ctx, g: g, root: root, trees: map[string]*manifest.Tree{}, taken: map[string]bool{}}
}

// capture is scan.Options.Capture.
func (c *targetCapture) capture(rel string, dir bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.tree(path.Dir(rel))
	if t == nil {
		return false
	}
	e, ok := t.Lookup(path.Base(rel))
	if !ok || e.Kind == manifest.KindUnreadable || (e.Kind == manifest.KindDir) != dir {
		return false
	}
	c.taken[rel] = true
	return true
}

// tree returns the snapshot's tree of directory d ("." for the root), nil
// where it holds no directory or the tree cannot be read (the restore
// reads it again, and fails then). It is called with c.mu held.
func (c *targetCapture) tree(d string) *manifest.Tree {
	if t, ok := c.trees[d]; ok {
		return t
	}
	id := c.root
	if d != "." {
		parent := c.tree(path.Dir(d))
		if parent == nil {
			return nil
		}
		e, ok := parent.Lookup(path.Base(d))
		if !ok || e.Kind != manifest.KindDir {
			c.trees[d] = nil
			return nil
		}
		id = e.Tree
	}
	var t *manifest.Tree
	if loaded, err := manifest.Load(c.ctx, c.g, id); err == nil {
		t = &loaded
	}
	c.trees[d] = t
	return t
}

// captured returns the paths captured so far.
func (c *targetCapture) captured() map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.taken)
}
