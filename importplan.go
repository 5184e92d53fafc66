package casckpt

import (
	"context"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/repo"
)

// importPlan is what Import stores in its read view and then commits: the
// new snapshots with their origins, the origins of unchanged snapshots
// (aliases of their parent's), and the turns the labelled ones start or end.
type importPlan struct {
	w       *cas.Writer
	workdir string
	recs    []record
	origins []string // of recs
	aliases []importAlias
	// ids are the snapshots this import gives an origin, by origin; times
	// the times of those it records.
	ids   map[string]cas.ID
	times map[cas.ID]time.Time
	// turns are the turn records as they are to be, by turn ID; order is
	// the order they were first touched in.
	turns map[string]*index.Turn
	order []string
}

// importAlias records origin as naming snapshot id, recorded before.
type importAlias struct {
	origin string
	id     cas.ID
}

// resolve returns the snapshot origin names: one this import records, or
// one recorded before.
func (pl *importPlan) resolve(tx *index.Tx, origin string) (cas.ID, bool) {
	if origin == "" {
		return cas.ID{}, false
	}
	if id, ok := pl.ids[origin]; ok {
		return id, true
	}
	return tx.Origin(origin)
}

// build builds and stores the snapshots not imported yet, in the read view
// tx, counting the skipped and unchanged ones in res.
func (pl *importPlan) build(ctx context.Context, tx *index.Tx, snaps []ImportSnapshot, res *ImportResult) error {
	nextSeq := tx.NextSeq(pl.workdir)
	for _, imp := range snaps {
		if _, done := pl.resolve(tx, imp.Origin); done {
			res.Skipped++
			continue
		}
		if parent, ok := pl.resolve(tx, imp.Parent); ok && imp.Unchanged {
			pl.aliases = append(pl.aliases, importAlias{origin: imp.Origin, id: parent})
			pl.ids[imp.Origin] = parent
			res.Unchanged++
			continue
		}
		root, files, bytes, err := imp.Build(ctx, pl.w)
		if err != nil {
			return err
		}
		rec := record{ID: index.NewSnapshotID(pl.workdir, root, imp.Time, imp.Reason), Project: pl.workdir, Root: root,
			Time: imp.Time, Reason: imp.Reason, Stats: index.Stats{Files: files, Bytes: bytes}, MaxFileSize: imp.MaxFileSize,
			Session: imp.Session, Turn: imp.Turn}
		if rec.BackupID, err = repo.PutBackup(ctx, pl.w, rec, nextSeq+uint64(len(pl.recs)), imp.Origin); err != nil {
			return err
		}
		if err := pl.turn(tx, imp, rec.ID); err != nil {
			return err
		}
		pl.recs = append(pl.recs, rec)
		pl.origins = append(pl.origins, imp.Origin)
		pl.ids[imp.Origin] = rec.ID
		pl.times[rec.ID] = rec.Time
	}
	for _, id := range pl.order {
		tr := pl.turns[id]
		var err error
		if tr.BackupID, err = pl.w.Put(ctx, cas.KindRecord, index.EncodeTurnBackup(*tr)); err != nil {
			return err
		}
	}
	return pl.w.Flush(ctx)
}

// turn plans the change of the turn that snapshot snap of imp ends, if
// imp names one.
func (pl *importPlan) turn(tx *index.Tx, imp ImportSnapshot, snap cas.ID) error {
	if imp.Turn == "" {
		return nil
	}
	tr, ok := pl.turns[imp.Turn]
	if !ok {
		rec, found, err := tx.Turn(pl.workdir, imp.Turn)
		if err != nil {
			return err
		}
		if !found {
			start, known := pl.resolve(tx, imp.Parent)
			if !known {
				start = snap
			}
			started, ok := pl.times[start]
			if !ok {
				started = imp.Time // the parent was imported by an earlier run
			}
			rec = index.Turn{Project: pl.workdir, ID: imp.Turn, Session: imp.Session, Start: start, Started: started}
		}
		tr = &rec
		pl.turns[imp.Turn] = tr
		pl.order = append(pl.order, imp.Turn)
	}
	tr.End, tr.Ended, tr.Interrupted = snap, imp.Time, false
	return nil
}

// commit records the plan in tx and the IDs of the snapshots it adds in
// res. A snapshot whose origin another import recorded meanwhile is left
// out, and so are the turns: that import recorded them.
func (pl *importPlan) commit(tx *index.Tx, res *ImportResult) error {
	raced := false
	for i := range pl.recs {
		if _, done := tx.Origin(pl.origins[i]); done {
			raced = true
			continue
		}
		if err := tx.AddSnapshot(&pl.recs[i]); err != nil {
			return err
		}
		if err := tx.PutOrigin(pl.origins[i], pl.recs[i].ID); err != nil {
			return err
		}
		res.IDs = append(res.IDs, pl.recs[i].ID)
	}
	for _, a := range pl.aliases {
		if _, done := tx.Origin(a.origin); done {
			continue
		}
		if err := tx.PutOrigin(a.origin, a.id); err != nil {
			return err
		}
	}
	if raced {
		return nil
	}
	for _, id := range pl.order {
		tr := pl.turns[id]
		// A turn made again exactly as one deleted before is not deleted.
		if err := tx.DeleteTombstone(tr.BackupID); err != nil {
			return err
		}
		if err := tx.PutTurn(*tr); err != nil {
			return err
		}
	}
	return nil
}
