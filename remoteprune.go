package casckpt

import (
	"context"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/gc"
	"github.com/casckpt/casckpt/index"
)

// remotePrune is prune on a store in a bucket: it drops the snapshots of
// stale projects, then those the size cap drops (planRemoteCap), with
// dropped markers, then runs gc (remoteGC). It never drops orphans, since
// a project's directory lives on the machine that snapshots it, not on
// this one.
func (s *Store) remotePrune(ctx context.Context, opts PruneOptions) (PruneResult, error) {
	out := PruneResult{CapMet: true, Drops: []Drop{}}
	if opts.MinInterval > 0 {
		last, err := s.lastPrune(ctx)
		if err != nil {
			return out, err
		}
		if !last.IsZero() && s.opts.Now().Sub(last) < opts.MinInterval {
			out.Skipped = true
			return out, nil
		}
	}
	ss, err := s.begin(ctx, false, true) // shared: it syncs first
	if err != nil {
		return out, err
	}
	run := ss.update
	if opts.DryRun {
		run = s.db.DryRun
	}
	err = run(func(tx *index.Tx) error {
		projects, records, err := loadProjects(tx)
		if err != nil {
			return err
		}
		out.Scanned = len(projects)
		plan := gc.PlanRetention(projects, gc.Policy{StaleAfter: opts.StaleAfter}, s.opts.Now())
		if opts.MaxSize > 0 {
			if plan, _, out.CapMet, err = s.planRemoteCap(ctx, tx, projects, plan, opts.MaxSize, cas.ID{}, ""); err != nil {
				return err
			}
		}
		stale := map[string]bool{} // the projects the stale rule emptied
		for _, d := range plan.Drops {
			out.Drops = append(out.Drops, Drop{Project: d.Project, ID: d.ID, Rule: string(d.Why)})
			stale[d.Project] = stale[d.Project] || d.Why == gc.WhyStale
		}
		for _, w := range plan.Forget {
			if stale[w] {
				out.DeletedStale++
			}
		}
		out.SnapshotsDropped = len(plan.Drops)
		if opts.DryRun {
			return nil
		}
		if err := s.applyRemoteDrops(ctx, tx, plan, records); err != nil {
			return err
		}
		return tx.SetLastPrune(s.opts.Now())
	})
	ss.end()
	if err != nil || opts.DryRun {
		return out, err
	}
	res, err := s.remoteGC(ctx)
	out.BytesFreed = res.BytesFreed
	return out, err
}
