package casckpt

import (
	"context"
	"fmt"

	"github.com/casckpt/casckpt/gc"
	"github.com/casckpt/casckpt/index"
)

// remotePrune is prune on a store in a bucket: it drops the snapshots of
// stale projects with dropped markers, then runs gc (remoteGC). It never
// drops orphans, since a project's directory lives on the machine that
// snapshots it, not on this one; a size cap is refused.
func (s *Store) remotePrune(ctx context.Context, opts PruneOptions) (PruneResult, error) {
	out := PruneResult{CapMet: true, Drops: []Drop{}}
	if opts.MaxSize > 0 {
		return out, fmt.Errorf("%w: prune --max-size is not supported yet on an s3:// store (%s); nothing was dropped", ErrRefused, s.remote.url)
	}
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
		for _, d := range plan.Drops {
			out.Drops = append(out.Drops, Drop{Project: d.Project, ID: d.ID, Rule: string(d.Why)})
			if opts.DryRun {
				continue
			}
			if err := tx.DeleteSnapshot(records[d.ID]); err != nil {
				return err
			}
			if err := s.markDropped(ctx, tx, d.ID); err != nil {
				return err
			}
		}
		out.SnapshotsDropped, out.DeletedStale = len(plan.Drops), len(plan.Forget)
		for _, w := range plan.Forget {
			if err := tx.DeleteProject(w); err != nil {
				return err
			}
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
