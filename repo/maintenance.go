package repo

import (
	"context"
	"fmt"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/gc"
	"github.com/casckpt/casckpt/index"
)

// LoadProjects reads every project with its snapshots, for retention and
// marking, each with its lifecycle (its policy record), with the records
// by snapshot ID. state tells what became of a
// project's directory (nil: nothing is observable, gc.Unreachable).
func LoadProjects(tx *index.Tx, state func(index.Project) gc.State) ([]gc.Project, map[cas.ID]index.Snapshot, error) {
	records := map[cas.ID]index.Snapshot{}
	var out []gc.Project
	policies, err := tx.Policies()
	if err != nil {
		return nil, nil, err
	}
	err = tx.EachProject(func(ps index.ProjectSnapshots) error {
		p := gc.Project{Workdir: ps.Workdir, LastTouch: ps.LastTouch, State: gc.Unreachable, Lifecycle: Lifecycle(policies[ps.Workdir]),
			Snapshots: make([]gc.Snapshot, 0, len(ps.Snapshots))}
		if state != nil {
			p.State = state(ps.Project)
		}
		for _, s := range ps.Snapshots {
			records[s.ID] = s
			p.Snapshots = append(p.Snapshots, gc.Snapshot{ID: s.ID, Root: s.Root, Time: s.Time, Pinned: s.Pinned})
		}
		out = append(out, p)
		return nil
	})
	return out, records, err
}

// TreeReader returns a Store that reads objects through trees, an index
// over idx that locates every tree from memory (cas.IndexTrees, one pass
// over idx), and trees: what MarkProjects reads through. A mark reads
// every tree of the store, and one pass over the index costs less than a
// lookup each; what reads trees again in the same transaction (a sweep's
// DeltaBases) finds the blocks the mark decoded in the Store's cache. The
// caller closes the Store.
func TreeReader(packs cas.PackStore, idx cas.IndexWriter) (*cas.Store, *cas.TreeIndex, error) {
	trees, err := cas.IndexTrees(idx)
	if err != nil {
		return nil, nil, err
	}
	return cas.NewStore(packs, trees), trees, nil
}

// MarkProjects marks every object the snapshots of projects reach, and
// the bases of those stored as deltas, reading their trees through
// objects, a Store over trees (TreeReader).
func MarkProjects(ctx context.Context, objects *cas.Store, trees *cas.TreeIndex, projects []gc.Project) (*gc.Graph, error) {
	var roots []cas.ID
	for _, p := range projects {
		for _, s := range p.Snapshots {
			roots = append(roots, s.Root)
		}
	}
	return gc.Mark(ctx, objects, roots, trees.Objects(), trees.Trees(), trees.Base)
}

// StoredSize returns the size of an object as stored in its pack, for the
// size cap's plan (gc.CapInput.Size): 0 for one objects cannot locate.
func StoredSize(objects *cas.Store) func(cas.ID) int64 {
	return func(id cas.ID) int64 {
		l, err := objects.Locate(id)
		if err != nil {
			return 0
		}
		return l.PackBytes()
	}
}

// CheckLiveIndexed refuses a deletion when the index lacks an object that
// a kept snapshot needs, naming how many and one of them. The index then
// is damaged (a lost key would make the collection take the object for
// garbage and delete its pack) or the object is lost: either way nothing
// may be deleted before a repair.
func CheckLiveIndexed(graph *gc.Graph, objects *cas.Store) error {
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

// LiveBackups returns the record backups of the snapshots that plan keeps.
func LiveBackups(records map[cas.ID]index.Snapshot, plan gc.Plan) map[cas.ID]bool {
	live := make(map[cas.ID]bool, len(records))
	for _, r := range records {
		if !r.BackupID.IsZero() {
			live[r.BackupID] = true
		}
	}
	for _, d := range plan.Drops {
		delete(live, records[d.ID].BackupID)
	}
	return live
}

// AddRecordBackups adds to live the backups of the turn records in tx
// (those that the drops left: a turn goes with the last of its snapshots)
// and of its policies (index.EncodePolicyBackup: a superseded policy's
// backup is not live).
func AddRecordBackups(tx *index.Tx, live map[cas.ID]bool) error {
	policies, err := tx.Policies()
	if err != nil {
		return err
	}
	for _, p := range policies {
		live[cas.Sum(cas.KindRecord, index.EncodePolicyBackup(p))] = true
	}
	projects, err := tx.Projects()
	if err != nil {
		return err
	}
	for _, p := range projects {
		turns, err := tx.Turns(p.Workdir)
		if err != nil {
			return err
		}
		for _, tr := range turns {
			if !tr.BackupID.IsZero() {
				live[tr.BackupID] = true
			}
		}
	}
	return nil
}

// Lifecycle returns what retention needs of policy p.
func Lifecycle(p index.Policy) gc.Lifecycle {
	return gc.Lifecycle{State: p.Lifecycle, Since: p.LifecycleSince, Test: p.Test,
		Retention: time.Duration(p.RetentionDays) * 24 * time.Hour, NoCleanup: p.NoCleanup}
}
