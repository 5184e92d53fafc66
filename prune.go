package casckpt

import (
	"context"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/gc"
	"github.com/casckpt/casckpt/index"
)

// PruneOptions are the rules of a prune. The zero value drops only orphans.
type PruneOptions struct {
	// StaleAfter drops projects not touched for this long (0: never).
	StaleAfter time.Duration
	// KeepOrphans keeps orphan projects (see ProjectState).
	KeepOrphans bool
	// CompletedAfter and FailedAfter drop the projects whose lifecycle
	// (Store.SetPolicy) is completed (failed) and has been for this long
	// (0: never), unless the project's RetentionDays say otherwise. For a
	// project with a lifecycle they replace StaleAfter; a running one is
	// never dropped as an orphan, one with cleanup off by no rule, and a
	// finished test project by the first prune.
	CompletedAfter time.Duration
	FailedAfter    time.Duration
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
	DeletedOrphan    int // orphan projects removed (their directory was deleted)
	DeletedStale     int // projects removed because untouched too long
	DeletedCompleted int // completed projects removed after their days
	DeletedFailed    int // failed projects removed after their days
	DeletedTest      int // finished test projects removed
	SnapshotsDropped int
	BytesFreed       int64
	// CapMet is false when the size cap could not be met (pinned snapshots
	// need more room).
	CapMet bool
	// Drops are the snapshots dropped (or, in a dry run, to be dropped),
	// each with the rule that dropped it.
	Drops []Drop
}

// Drop is a snapshot a prune dropped and the rule that dropped it:
// "orphan" (its directory was deleted), "stale" (untouched too long),
// "completed" or "failed" (its lifecycle ended long enough ago), "test"
// (a finished test project) or "size-cap" (the store was over its cap).
type Drop struct {
	Project string
	ID      cas.ID
	Rule    string
}

// Prune drops orphan and stale projects, applies the size cap and collects
// the garbage, so the space is returned before it returns (on a backend
// without immediate deletion, as far as its gc's phases allow). Orphans
// are dropped only where a project's directory is on this machine
// (repo.Features.OrphansObservable).
func (s *Store) Prune(ctx context.Context, opts PruneOptions) (PruneResult, error) {
	if skip, err := s.pruneRanRecently(ctx, opts.MinInterval); err != nil || skip {
		return PruneResult{Skipped: skip, CapMet: true, Drops: []Drop{}}, err
	}
	f := s.repo.Backend().Features()
	req := collectRequest{
		policy: gc.Policy{StaleAfter: opts.StaleAfter, DropOrphans: !opts.KeepOrphans && f.OrphansObservable,
			CompletedAfter: opts.CompletedAfter, FailedAfter: opts.FailedAfter},
		cap:     opts.MaxSize,
		dryRun:  opts.DryRun,
		markRun: true,
		// Without immediate deletion a prune's gc has phases to advance
		// even when nothing new is dropped: never idle.
		skipIdle: f.ImmediateDelete,
	}
	res, err := s.maintain(ctx, req, false)
	if res.idle {
		return PruneResult{Scanned: res.projects, CapMet: true, Drops: []Drop{}}, err
	}
	out := PruneResult{Scanned: res.projects, BytesFreed: res.bytesFreed, CapMet: res.fits}
	out.report(res.plan)
	return out, err
}

// pruneRanRecently reports whether a prune ran less than minInterval ago
// (never when minInterval is not positive): prune --auto then skips.
func (s *Store) pruneRanRecently(ctx context.Context, minInterval time.Duration) (bool, error) {
	if minInterval <= 0 {
		return false, nil
	}
	last, err := s.lastPrune(ctx)
	if err != nil {
		return false, err
	}
	return !last.IsZero() && s.opts.Now().Sub(last) < minInterval, nil
}

// report fills in out what plan drops: the snapshots, each with its rule,
// and how many projects each rule that drops a whole project emptied.
func (out *PruneResult) report(plan gc.Plan) {
	out.SnapshotsDropped, out.Drops = len(plan.Drops), []Drop{}
	why := map[string]gc.Why{} // the rule that emptied each forgotten project
	for _, d := range plan.Drops {
		out.Drops = append(out.Drops, Drop{Project: d.Project, ID: d.ID, Rule: string(d.Why)})
		if d.Why.Emptying() {
			why[d.Project] = d.Why
		}
	}
	counts := map[gc.Why]*int{gc.WhyOrphan: &out.DeletedOrphan, gc.WhyStale: &out.DeletedStale,
		gc.WhyCompleted: &out.DeletedCompleted, gc.WhyFailed: &out.DeletedFailed, gc.WhyTest: &out.DeletedTest}
	for _, w := range plan.Forget {
		if n := counts[why[w]]; n != nil {
			*n++
		}
	}
}

// idle reports, from the records alone, that a collection of req has
// nothing to do, and then records that it ran when it marks runs: no
// project is orphan or stale, no snapshot was dropped since the last
// collection (so there is no garbage to collect) and the store is under
// the cap as the disk counts it. Marking every snapshot's objects, which
// costs as much as the store is large, is then not needed.
func (ss *hold) idle(tx *index.Tx, projects []gc.Project, req collectRequest) (bool, error) {
	plan := gc.PlanRetention(projects, req.policy, ss.s.opts.Now())
	if len(plan.Drops) > 0 || len(plan.Forget) > 0 || tx.PendingDrops() > 0 {
		return false, nil
	}
	if req.cap > 0 {
		used, err := diskUsage(ss.s.dir)
		if err != nil || used > req.cap {
			return false, err
		}
	}
	if req.markRun {
		return true, tx.SetLastPrune(ss.s.opts.Now())
	}
	return true, nil
}

func (s *Store) lastPrune(ctx context.Context) (time.Time, error) {
	var last time.Time
	err := s.read(ctx, func(v view) error {
		last = v.Tx.LastPrune()
		return nil
	})
	return last, err
}
