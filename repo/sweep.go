package repo

import (
	"context"
	"errors"
	"io/fs"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/gc"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/manifest"
)

// PrepareSweep prepares, in write transaction tx that dropped what plan
// drops, the sweep of every object that no kept snapshot (graph) and no
// kept record backup reaches: it drops the stat cache's and the change
// counts' entries of dead objects, brings the tombstones up to date
// (updateTombstones) and removes the dead objects from the index
// (cas.PrepareSweep). With repackAll every pack with a dead byte is
// rewritten (the size cap is a promise: it returns every dead byte). With
// deltas (Features.Deltas) the objects it copies may be stored as deltas
// of their earlier versions (DeltaBases, which reads trees through
// objects: the mark's TreeReader serves, its blocks cached, because the
// trees of kept snapshots stay where it located them until the sweep
// copies them). The sweep's pack deletions follow the commit
// (Sweep.Finish): a backend with immediate deletion only.
func PrepareSweep(ctx context.Context, tx *index.Tx, objects *cas.Store, packs cas.PackStore, graph *gc.Graph, records map[cas.ID]index.Snapshot, plan gc.Plan, repackAll, deltas bool) (*cas.Sweep, error) {
	dead := func(id cas.ID) bool { return !graph.Live(id) }
	if _, err := tx.DropStatEntries(dead); err != nil {
		return nil, err
	}
	if _, err := tx.DropChangeCounts(dead, manifest.EmptyTreeID); err != nil {
		return nil, err
	}
	var opts cas.SweepOptions
	if repackAll {
		opts.RepackThreshold = -1
	}
	backups := LiveBackups(records, plan)
	if err := AddRecordBackups(tx, backups); err != nil {
		return nil, err
	}
	live := func(id cas.ID) bool { return graph.Live(id) || backups[id] }
	if err := updateTombstones(ctx, tx, objects, packs); err != nil {
		return nil, err
	}
	opts.Required, opts.RequiredCount = graph.Live, graph.Objects()
	if deltas {
		opts.Bases = DeltaBases(ctx, objects, keptSnapshots(records, plan))
	}
	sweep, err := cas.PrepareSweep(ctx, tx.Objects(), packs, live, opts)
	if errors.Is(err, cas.ErrLiveNotIndexed) {
		if detail := CheckLiveIndexed(graph, objects); detail != nil {
			err = detail
		}
	}
	return sweep, err
}

// updateTombstones brings the tombstones of the record backups of deleted
// snapshots and turns up to date before a sweep. Dead objects leave the
// index at a sweep but stay in their pack until it is rewritten, so a new
// tombstone's pack is looked up now, while the backup is still indexed,
// and remembered (dead objects never move); a tombstone is dropped once
// its pack is gone from the index and the disk.
func updateTombstones(ctx context.Context, tx *index.Tx, objects *cas.Store, packs cas.PackStore) error {
	tombstones, err := tx.Tombstones()
	if err != nil {
		return err
	}
	infos, err := tx.Objects().Packs()
	if err != nil {
		return err
	}
	names := make(map[uint32][16]byte, len(infos))
	indexed := make(map[[16]byte]bool, len(infos))
	for _, p := range infos {
		names[p.Number] = p.Name
		indexed[p.Name] = true
	}
	for id, pack := range tombstones {
		switch {
		case pack == [16]byte{}:
			if l, lerr := objects.Locate(id); lerr == nil {
				err = tx.SetTombstone(id, names[l.Pack])
			} else {
				err = tx.DeleteTombstone(id) // in no indexed pack: it never was
			}
		case !indexed[pack]:
			if _, serr := packs.Stat(ctx, cas.PackInfo{Name: pack}.FileName()); errors.Is(serr, fs.ErrNotExist) {
				err = tx.DeleteTombstone(id)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// keptSnapshots is records less those plan drops.
func keptSnapshots(records map[cas.ID]index.Snapshot, plan gc.Plan) []index.Snapshot {
	dropped := make(map[cas.ID]bool, len(plan.Drops))
	for _, d := range plan.Drops {
		dropped[d.ID] = true
	}
	kept := make([]index.Snapshot, 0, len(records))
	for id, r := range records {
		if !dropped[id] {
			kept = append(kept, r)
		}
	}
	return kept
}
