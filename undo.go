package casckpt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/restorer"
	"github.com/casckpt/casckpt/internal/scan"
	"github.com/casckpt/casckpt/internal/undo"
)

// UndoOptions tune Undo. The zero value undoes the newest ended turn.
type UndoOptions struct {
	// DryRun plans the undo and changes nothing, taking no pre-undo
	// snapshot.
	DryRun bool
	// MaxFileSize and MaxFiles are the scan's exclusion limits, as in
	// SnapshotOptions; excluded paths are never touched. MaxFileSize
	// defaults to the limit the turn's end snapshot was taken with, whose
	// SnapshotOptions.Exclude and MaxDirFiles apply too.
	MaxFileSize int64
	MaxFiles    int
	// Progress, if set, is called as files and links are written, from any
	// goroutine, as RestoreOptions.Progress is.
	Progress func(filesDone, filesTotal, bytesDone, bytesTotal int64)
	// Redo re-applies the newest undo instead (the turn argument must be
	// ""): the turn it undid has its changes made again, by the same rules
	// run the other way, after a pre-redo snapshot.
	Redo bool
	// BeforeApply, if set, is called as RestoreOptions.BeforeApply is.
	BeforeApply func()
}

// Conflict is a path that Undo left alone, and why (one line).
type Conflict = undo.Conflict

// UndoResult says what Undo did (or, in a dry run, would do). Its slices
// are never nil.
type UndoResult struct {
	Turn      string // the turn undone
	PreUndoID ID     // zero when no pre-undo snapshot was taken
	// Reverted are the paths put back as they were when the turn began,
	// Merged the text files given a clean three-way merge, Conflicts the
	// paths left alone.
	Reverted, Merged []string
	Conflicts        []Conflict
	Written, Deleted int // files and links written and deleted
	DryRun           bool
}

// PreUndoPrefix starts the reason of every pre-undo snapshot, and
// PreRedoPrefix that of every pre-redo one.
const (
	PreUndoPrefix = "pre-undo"
	PreRedoPrefix = "pre-redo"
)

// Undo reverts the changes of one turn in the project's working tree and
// keeps everything done since, as git revert does: turn names it (""
// takes the newest ended turn not yet undone, so that undo after undo
// walks back turn by turn). The turn is marked undone (TurnInfo.UndoneBy)
// until a redo (UndoOptions.Redo) re-applies it, and what the undo wrote
// is recorded in the write ledger as the agent's (see Store.RecordWrite).
// For each path the turn changed: if it is still as the turn left it, it
// goes back to its state at the turn's start; if it changed since and
// the three versions are text, their three-way merge (base: the turn's
// end; ours: the working tree; theirs: the turn's start) is written when
// it is clean; otherwise it is left alone and reported as a conflict. It reads and verifies everything it
// writes, heals what it overwrites as Restore does, then takes a pre-undo
// snapshot (unless the tree equals the newest one and nothing was healed) and replaces each file atomically, as Restore does: a path
// that changed since the scan is left alone, a conflict with the reason
// ReasonChangedDuring. Restores and undos of one project run one
// at a time.
//
// An unknown turn is ErrNotFound; an open one, or one whose start or end
// snapshot was dropped, ErrRefused (see TurnInfo.Undoable). Conflicts are
// no error.
func (s *Store) Undo(ctx context.Context, dir, turn string, opts UndoOptions) (UndoResult, error) {
	res := UndoResult{Reverted: []string{}, Merged: []string{}, Conflicts: []Conflict{}, DryRun: opts.DryRun}
	workdir, err := Workdir(dir)
	if err != nil {
		return res, err
	}
	if opts.Redo && turn != "" {
		return res, errors.New("undo: a redo re-applies the newest undo and takes no turn")
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
	var plan undo.Plan
	what := PreUndoPrefix
	if opts.Redo {
		what = PreRedoPrefix
	}
	var current scan.Result
	res.PreUndoID, err = ss.changeTree(ctx, opts.DryRun, what, func(v view) (p *pendingSnapshot, err error) {
		p, plan, current, err = ss.prepareUndo(ctx, v, &res, workdir, turn, opts)
		return p, err
	}, func(v view) error {
		left, err := ss.s.apply(ctx, workdir, plan.Content(v.Objects), plan.Restore, current, applyOptions{progress: opts.Progress})
		plan = plan.Without(left, ReasonChangedDuring)
		res.Reverted, res.Merged, res.Conflicts = plan.Reverted, plan.Merged, plan.Conflicts
		res.Written, res.Deleted = plan.Restore.Written, plan.Restore.Deleted
		return err
	}, opts.BeforeApply)
	if err != nil || opts.DryRun {
		return res, err
	}
	if err := errors.Join(ss.recordOwnWrites(ctx, workdir, plan.Restore.Changes), ss.markUndone(workdir, res, opts.Redo)); err != nil {
		return res, fmt.Errorf("undo of turn %s: the files are written, but recording the undo failed: %w", res.Turn, err)
	}
	return res, nil
}

// markUndone records that turn res.Turn was undone by the undo whose
// pre-undo snapshot is res.PreUndoID (the newest snapshot when none was
// taken), or, for a redo, that it is undone no more.
func (ss *hold) markUndone(workdir string, res UndoResult, redo bool) error {
	return ss.Update(func(tx *index.Tx) error {
		tr, ok, err := tx.Turn(workdir, res.Turn)
		if err != nil || !ok {
			return err // a turn dropped meanwhile has nothing to mark
		}
		tr.UndoneBy = cas.ID{}
		if !redo {
			if tr.UndoneBy = res.PreUndoID; tr.UndoneBy.IsZero() {
				snaps, err := tx.Snapshots(workdir)
				if err != nil || len(snaps) == 0 {
					return err
				}
				tr.UndoneBy = snaps[0].ID
			}
		}
		return tx.PutTurn(tr)
	})
}

// prepareUndo finds the turn and its snapshots, scans the working tree
// and plans the undo (summed up in res), reading and verifying every chunk
// it writes. Outside a dry run the scan is stored as the pre-undo
// snapshot, returned uncommitted: a refused undo changes nothing.
func (ss *hold) prepareUndo(ctx context.Context, v view, res *UndoResult, workdir, turnID string, opts UndoOptions) (*pendingSnapshot, undo.Plan, scan.Result, error) {
	snaps, err := v.Tx.Snapshots(workdir)
	if err != nil {
		return nil, undo.Plan{}, scan.Result{}, err
	}
	tr, err := findTurn(v.Tx, workdir, turnID, opts.Redo)
	if err != nil {
		return nil, undo.Plan{}, scan.Result{}, err
	}
	res.Turn = tr.ID
	var start, end record // both kept: the turn is undoable
	for _, sn := range snaps {
		if sn.ID == tr.Start {
			start = sn
		}
		if sn.ID == tr.End { // the start too, for a turn that changed nothing
			end = sn
		}
	}
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = end.MaxFileSize
	}
	exclude, maxDirFiles := end.Exclude, end.MaxDirFiles // the turn's end snapshot's, as its MaxFileSize
	reason := fmt.Sprintf("%s: before undoing turn %s", PreUndoPrefix, tr.ID)
	if opts.Redo { // the undo's rules, run from the turn's start to its end
		start, end = end, start
		reason = fmt.Sprintf("%s: before redoing turn %s", PreRedoPrefix, tr.ID)
	}
	overlay := newTreeOverlay(v.Objects)
	current, pending, err := ss.scanBefore(ctx, v, workdir, overlay, opts.DryRun, SnapshotOptions{
		Reason:      reason,
		Keep:        -1, // an undo never drops snapshots
		MaxFileSize: opts.MaxFileSize, MaxFiles: opts.MaxFiles,
		Exclude: exclude, MaxDirFiles: maxDirFiles,
	})
	if err != nil {
		return nil, undo.Plan{}, scan.Result{}, fmt.Errorf("pre-undo snapshot: %w", err)
	}
	plan, err := planUndo(ctx, v, overlay, workdir, start, end, current)
	if err == nil && pending != nil {
		err = ss.heal(ctx, v, pending, overlay, current.Root, plan.Restore.Changes)
	}
	if err != nil {
		if pending != nil {
			pending.abort()
		}
		return nil, undo.Plan{}, scan.Result{}, err
	}
	_, unfit := hostPlatform(workdir).Fit(plan.Restore) // what this file system cannot hold: conflicts
	for _, k := range unfit {
		plan = plan.Without([]string{k.Path}, k.Reason)
	}
	res.Reverted, res.Merged, res.Conflicts = plan.Reverted, plan.Merged, plan.Conflicts
	res.Written, res.Deleted = plan.Restore.Written, plan.Restore.Deleted
	return pending, plan, current, nil
}

// findTurn returns turn id of the project (its newest ended turn not yet
// undone when id is ""; with redo, the turn undone last), or why it cannot
// be undone: it is unknown (ErrNotFound), open, or a snapshot of it was
// dropped (ErrRefused).
func findTurn(tx *index.Tx, workdir, id string, redo bool) (TurnInfo, error) {
	turns, _, err := projectTurns(tx, workdir, "")
	if err != nil {
		return TurnInfo{}, err
	}
	if redo {
		return lastUndone(tx, workdir, turns)
	}
	for _, t := range turns {
		if t.ID == id || (id == "" && !t.Open() && t.UndoneBy.IsZero()) {
			return t, t.Undoable()
		}
	}
	if id == "" {
		return TurnInfo{}, fmt.Errorf("undo: %w: %s has no ended turn left to undo", ErrNotFound, workdir)
	}
	return TurnInfo{}, fmt.Errorf("undo: turn %q %w in %s; casckpt turns lists them", id, ErrNotFound, workdir)
}

// lastUndone returns the turn of turns (newest first) undone last: the
// one whose pre-undo snapshot is the newest (of two undone by one
// snapshot, the older turn, undone after the newer).
func lastUndone(tx *index.Tx, workdir string, turns []TurnInfo) (TurnInfo, error) {
	snaps, err := tx.Snapshots(workdir)
	if err != nil {
		return TurnInfo{}, err
	}
	seq := make(map[cas.ID]uint64, len(snaps))
	for _, sn := range snaps {
		seq[sn.ID] = sn.Seq
	}
	var last *TurnInfo
	for i, t := range turns {
		if !t.UndoneBy.IsZero() && (last == nil || seq[t.UndoneBy] >= seq[last.UndoneBy]) {
			last = &turns[i]
		}
	}
	if last == nil {
		return TurnInfo{}, fmt.Errorf("redo: %w: %s has no undone turn to redo", ErrNotFound, workdir)
	}
	return *last, last.Undoable()
}

// planUndo plans the undo of the turn from start to end over the tree
// scanned as current (its trees in g), reading the working tree's files
// it merges through an os.Root, and verifies every chunk it writes. A
// snapshot whose data is missing or damaged is named.
func planUndo(ctx context.Context, v view, g *treeOverlay, workdir string, start, end record, current scan.Result) (undo.Plan, error) {
	root, err := os.OpenRoot(workdir)
	if err != nil {
		return undo.Plan{}, err
	}
	defer root.Close()
	plan, err := undo.NewPlan(ctx, g, undo.Input{
		Start: start.Root, End: end.Root, Work: current.Root, Excluded: current.Excluded,
		ReadWork: func(p string) ([]byte, error) { return root.ReadFile(filepath.FromSlash(p)) },
	})
	if err == nil {
		_, err = restorer.Verify(ctx, plan.Content(v.Objects), plan.Restore)
	}
	if err != nil {
		check := newDataCheck(v.Objects)
		for _, sn := range []record{start, end} {
			if derr := damaged(sn, check.snapshot(ctx, sn)); errors.Is(derr, ErrDamaged) {
				return undo.Plan{}, fmt.Errorf("%w; nothing was changed", derr)
			}
		}
	}
	return plan, err
}
