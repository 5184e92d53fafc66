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
	ss, err := s.begin(ctx, false, true) // shared: it syncs first
	if err != nil {
		return out, err
	}
	err = ss.updateOrDryRun(opts.DryRun)(func(tx *index.Tx) error {
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
		out.report(plan)
		if opts.DryRun {
			return nil
		}
		if err := s.applyDrops(ctx, tx, plan, records); err != nil {
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
