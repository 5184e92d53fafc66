package casckpt

import (
	"context"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/repo"
)

// ForgetPlan is what forgetting snapshots drops (PlanForget): the
// snapshots and, when measured, the stored bytes only they hold.
type ForgetPlan struct {
	Snapshots []Snapshot // each named snapshot once, in the order named
	// Measured reports whether Alone and Frees were computed (a mark of
	// every snapshot of the store).
	Measured bool
	// Alone[i] is the stored size of the objects that Snapshots[i] and no
	// other snapshot of the store reaches.
	Alone []int64
	// Frees is the stored size of the objects that no snapshot reaches
	// once all of them are forgotten: what a later gc frees of theirs.
	Frees int64
}

// PlanForget resolves refs in the project of dir as Forget does and
// changes nothing. With measure it marks every snapshot of the store to
// fill the plan's Alone and Frees.
func (s *Store) PlanForget(ctx context.Context, dir string, measure bool, refs ...Ref) (ForgetPlan, error) {
	plan := ForgetPlan{Snapshots: []Snapshot{}, Alone: []int64{}, Measured: measure}
	if len(refs) == 0 {
		return plan, nil
	}
	workdir, err := knownWorkdir(dir)
	if err != nil {
		return plan, err
	}
	err = s.read(ctx, func(v view) error {
		snaps, err := v.Tx.Snapshots(workdir)
		if err != nil {
			return err
		}
		seen := map[cas.ID]bool{}
		var roots []cas.ID
		for _, r := range refs {
			sn, _, err := resolve(snaps, r, workdir)
			if err != nil {
				return err
			}
			if !seen[sn.ID] {
				seen[sn.ID] = true
				plan.Snapshots = append(plan.Snapshots, hostSnapshot(sn))
				roots = append(roots, sn.Root)
			}
		}
		if !measure {
			return nil
		}
		projects, _, err := repo.LoadProjects(v.Tx, nil)
		if err != nil {
			return err
		}
		objects, trees, err := repo.TreeReader(s.repo.Packs(), v.Tx.Objects())
		if err != nil {
			return err
		}
		defer objects.Close()
		graph, err := repo.MarkProjects(ctx, objects, trees, projects)
		if err != nil {
			return err
		}
		size := repo.StoredSize(v.Objects)
		for _, root := range roots {
			plan.Alone = append(plan.Alone, graph.Alone(root, size))
		}
		for _, root := range roots {
			plan.Frees += graph.Release(root, size)
		}
		return nil
	})
	return plan, err
}
