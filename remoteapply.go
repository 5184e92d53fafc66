package casckpt

import (
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/remote"
)

// applyFetched records in the cache, in one transaction, what a sync read
// of the bucket: the new packs' objects, the new commits' records (in key
// order), the dropped markers, the pins, and the new watermark (never
// moved back from mark).
func applyFetched(tx *index.Tx, f *fetched, mark time.Time) error {
	packs, err := tx.Objects().Packs()
	if err != nil {
		return err
	}
	for _, p := range packs { // another process on this cache added it meanwhile
		delete(f.tables, p.Name)
	}
	for _, fc := range f.commits {
		for _, p := range fc.c.Packs {
			if sp, ok := f.tables[p.Name]; ok {
				if _, err := cas.AddPack(tx.Objects(), sp); err != nil {
					return err
				}
				delete(f.tables, p.Name)
			}
		}
	}
	a := applier{tx: tx, pins: f.pins}
	if err := a.load(); err != nil {
		return err
	}
	for _, fc := range f.commits {
		if fc.ok {
			if err := a.commit(fc.c); err != nil {
				return err
			}
		}
		if err := tx.Remote().SetApplied(fc.key); err != nil {
			return err
		}
	}
	for _, key := range f.dropped {
		if err := a.drop(key); err != nil {
			return err
		}
	}
	if err := a.applyPins(); err != nil {
		return err
	}
	if err := tx.Remote().SetProbed(); err != nil {
		return err
	}
	if f.newest.After(mark) {
		return tx.Remote().SetWatermark(f.newest)
	}
	return nil
}

// applier adds a sync's records to the cache.
type applier struct {
	tx    *index.Tx
	pins  map[cas.ID]bool
	snaps map[cas.ID]record // every snapshot of the cache, by ID
	tombs map[cas.ID][16]byte
}

func (a *applier) load() error {
	a.snaps = map[cas.ID]record{}
	var err error
	if a.tombs, err = a.tx.Tombstones(); err != nil {
		return err
	}
	return a.tx.EachProject(func(ps index.ProjectSnapshots) error {
		for _, sn := range ps.Snapshots {
			a.snaps[sn.ID] = sn
		}
		return nil
	})
}

// commit adds the records of commit c that the cache lacks: a snapshot
// not dropped, a turn record that says more than the cache's.
func (a *applier) commit(c remote.Commit) error {
	for _, r := range c.Records {
		switch r.Kind {
		case remote.RecordSnapshot:
			sn, origin, err := index.DecodeBackup(r.Data)
			if err != nil {
				continue // not a record this version reads
			}
			if err := a.snapshot(sn, r.BackupID, origin); err != nil {
				return err
			}
		case remote.RecordTurn:
			tr, err := index.DecodeTurnBackup(r.Data)
			if err != nil {
				continue
			}
			tr.BackupID = r.BackupID
			if err := a.turn(tr); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a *applier) snapshot(sn record, backup cas.ID, origin string) error {
	_, known := a.snaps[sn.ID]
	_, dead := a.tombs[backup]
	if known || dead || a.tx.Remote().Dropped(sn.ID) {
		return nil
	}
	sn.BackupID, sn.Pinned = backup, a.pins[sn.ID]
	p, ok, err := a.tx.Project(sn.Project)
	if err != nil {
		return err
	}
	if !ok {
		p = index.Project{Workdir: sn.Project, Created: sn.Time}
	}
	if sn.Time.After(p.LastTouch) {
		p.LastTouch = sn.Time
	}
	if err := a.tx.PutProject(p); err != nil {
		return err
	}
	if err := a.tx.AddSnapshot(&sn); err != nil {
		return err
	}
	a.snaps[sn.ID] = sn
	if origin != "" {
		return a.tx.PutOrigin(origin, sn.ID)
	}
	return nil
}

// turn records tr unless the cache holds a record of the turn that says
// as much, or tr's snapshots are not in the cache.
func (a *applier) turn(tr index.Turn) error {
	_, start := a.snaps[tr.Start]
	_, end := a.snaps[tr.End]
	if !start && !end {
		return nil
	}
	cur, ok, err := a.tx.Turn(tr.Project, tr.ID)
	if err != nil || (ok && !saysMore(tr, cur)) {
		return err
	}
	return a.tx.PutTurn(tr)
}

// drop applies the dropped marker under key.
func (a *applier) drop(key string) error {
	if _, id, ok := remote.ParseTimed(remote.DroppedDir, key); ok {
		if err := a.tx.Remote().SetDropped(id); err != nil {
			return err
		}
		if sn, ok := a.snaps[id]; ok {
			if err := a.tx.DeleteSnapshot(sn); err != nil {
				return err
			}
			delete(a.snaps, id)
		}
	}
	return a.tx.Remote().SetApplied(key)
}

// applyPins makes the cache's pins the bucket's.
func (a *applier) applyPins() error {
	for _, sn := range a.snaps {
		if sn.Pinned != a.pins[sn.ID] {
			sn.Pinned = a.pins[sn.ID]
			if err := a.tx.PutSnapshot(sn); err != nil {
				return err
			}
		}
	}
	return nil
}
