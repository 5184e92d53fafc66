package casckpt

import (
	"context"
	"fmt"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/gc"
	"github.com/casckpt/casckpt/index"
)

// remoteEnforceCap applies the size cap to a store in a bucket after
// snapshot just (docs/remote.md, "Size cap"): when the live data, as the
// cache locates it, is over limit, it drops snapshots as the local cap
// does (gc.PlanCap) by writing dropped markers; their data leaves at gc,
// which it then runs as a due collection (never waiting). Nothing is
// repacked and no pack is deleted here.
func (s *Store) remoteEnforceCap(ctx context.Context, limit int64, just SnapshotResult) (collectResult, error) {
	if under, err := s.remoteUnderCap(ctx, limit); err != nil || under {
		return collectResult{fits: true}, err
	}
	ss, err := s.begin(ctx, false, true) // shared: it syncs first
	if err != nil {
		return collectResult{}, err
	}
	var res collectResult
	due := false
	err = ss.update(func(tx *index.Tx) error {
		projects, records, err := loadProjects(tx)
		if err != nil {
			return err
		}
		res.plan, res.projected, res.fits, err = s.planRemoteCap(ctx, tx, projects, gc.Plan{}, limit, just.ID, just.Project)
		if err != nil {
			return err
		}
		if err := s.applyDrops(ctx, tx, res.plan, records); err != nil {
			return err
		}
		if err := tx.AddPendingDrops(len(res.plan.Drops)); err != nil {
			return err
		}
		due = len(res.plan.Drops) > 0
		return nil
	})
	ss.end()
	if err == nil && due {
		s.collectDue(ctx) // gc's first phase lists the data the drops freed
	}
	return res, err
}

// remoteUnderCap reports, from the cache's records alone, that the live
// data cannot be over limit: the packs the cache knows, less those a gc
// listed for deletion, hold no more than limit bytes.
func (s *Store) remoteUnderCap(ctx context.Context, limit int64) (bool, error) {
	var total int64
	err := s.read(ctx, func(v view) error {
		doomed := v.tx.Remote().DoomedPacks()
		packs, err := v.tx.Objects().Packs()
		for _, p := range packs {
			if !doomed[p.Name] {
				total += p.Size
			}
		}
		return err
	})
	return total <= limit, err
}

// planRemoteCap extends plan with the snapshots the size cap drops on a
// bucket, as gc.PlanCap plans the local cap: the size of the store is the
// stored bytes of every object a kept snapshot reaches, one copy each,
// where the cache locates it (the cache's database is not in the bucket,
// and garbage waiting for gc's second phase is not counted).
func (s *Store) planRemoteCap(ctx context.Context, tx *index.Tx, projects []gc.Project, plan gc.Plan, limit int64, protect cas.ID, current string) (gc.Plan, int64, bool, error) {
	objects := cas.NewStore(s.packs, tx.Objects())
	defer objects.Close()
	graph, err := markProjects(ctx, objects, projects)
	if err != nil {
		return plan, 0, false, fmt.Errorf("size cap: %w; nothing was dropped: run casckpt verify", err)
	}
	out, projected, fits := gc.PlanCap(plan, gc.CapInput{
		Projects: projects, Graph: graph, Size: storedSize(objects),
		Cap: limit, Protect: protect, Current: current,
	})
	return out, projected, fits, nil
}
