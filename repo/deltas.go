package repo

import (
	"cmp"
	"context"
	"slices"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/manifest"
)

// DeltaBases returns the cas.SweepOptions.Bases of a sweep or fold of a
// store that holds snapshots, whose trees it reads through objects: for
// each snapshot whose root tree the sweep copies, what its tree holds at
// the same paths as the snapshot before it in its project
// (manifest.VersionFinder: the trees of consecutive pairs read once).
// A pair that cannot be read names nothing: hints are a saving, never a
// need (a damaged tree is verify's to report).
func DeltaBases(ctx context.Context, objects cas.Getter, snapshots []index.Snapshot) func(repacked func(cas.ID) bool) (map[cas.ID]cas.ID, error) {
	return func(repacked func(cas.ID) bool) (map[cas.ID]cas.ID, error) {
		byProject := slices.Clone(snapshots)
		slices.SortFunc(byProject, func(a, b index.Snapshot) int {
			return cmp.Or(cmp.Compare(a.Project, b.Project), cmp.Compare(a.Seq, b.Seq))
		})
		versions := map[cas.ID]cas.ID{}
		finder := manifest.NewVersionFinder(ctx, objects)
		for i := 1; i < len(byProject); i++ {
			prev, cur := byProject[i-1], byProject[i]
			if prev.Project != cur.Project || prev.Root == cur.Root || !repacked(cur.Root) {
				continue
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			_ = finder.Versions(prev.Root, cur.Root, versions)
		}
		return versions, nil
	}
}
