package bucket

import (
	"errors"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/remote"
	"github.com/casckpt/casckpt/repo"
)

// applyFetched records in the cache, in one transaction, what a sync read
// of the bucket: the new packs' objects, the new commits' records (in key
// order, another machine's in its projects), the dropped markers, the
// pins, the objects the fleet key refused, the view and the new watermark
// (never moved back from mark).
func (b *Backend) applyFetched(tx *index.Tx, f *fetched, mark time.Time) error {
	if err := applyPacks(tx, f); err != nil {
		return err
	}
	if err := applyGCLists(tx, f.gcLists); err != nil {
		return err
	}
	a := applier{tx: tx, pins: f.pins, machine: b.machine}
	if err := a.load(); err != nil {
		return err
	}
	for _, fc := range f.commits {
		if err := a.fetched(fc); err != nil {
			return err
		}
	}
	for _, d := range f.dropped {
		if err := a.drop(d); err != nil {
			return err
		}
	}
	for key, why := range f.rejected {
		if err := tx.Journal().SetRejected(key, why); err != nil {
			return err
		}
		if err := tx.Journal().SetApplied(key); err != nil {
			return err
		}
	}
	if err := tx.Journal().SetView(b.view()); err != nil {
		return err
	}
	if err := a.applyPins(); err != nil {
		return err
	}
	if err := tx.Journal().SetProbed(); err != nil {
		return err
	}
	if f.newest.After(mark) {
		return tx.Journal().SetWatermark(f.newest)
	}
	return nil
}

// applyPacks records the packs that the new commits name and whose
// tables the sync read, their objects located in them over doomed packs
// (addPackOver).
func applyPacks(tx *index.Tx, f *fetched) error {
	packs, err := tx.Objects().Packs()
	if err != nil {
		return err
	}
	for _, p := range packs { // another process on this cache added it meanwhile
		delete(f.tables, p.Name)
	}
	doomed := tx.Journal().DoomedPacks()
	for _, l := range f.gcLists {
		for _, name := range l.packs {
			doomed[name] = true
		}
	}
	for _, fc := range f.commits {
		for _, p := range fc.c.Packs {
			if sp, ok := f.tables[p.Name]; ok {
				if err := addPackOver(tx, sp, doomed); err != nil {
					return err
				}
				delete(f.tables, p.Name)
			}
		}
	}
	return nil
}

// fetched applies the commit fc that a sync read: its records, unless it
// is damaged (then only named), and marks it applied; one not read whole
// is marked unread, and one the fleet key refused rejected.
func (a *applier) fetched(fc fetchedCommit) error {
	tx := a.tx
	if fc.damaged != "" { // skipped; verify and status name it
		if err := tx.Journal().SetApplied(fc.key); err != nil {
			return err
		}
		return tx.Journal().SetDamaged(fc.key, fc.damaged)
	}
	whole := fc.ok
	if fc.rejected != "" {
		// Its packs are no garbage to gc until someone looks: gc
		// refuses, as for a commit it cannot read.
		if err := tx.Journal().SetRejected(fc.key, fc.rejected); err != nil {
			return err
		}
	}
	if fc.ok {
		var err error
		if whole, err = a.commit(fc.c); err != nil {
			return err
		}
	}
	if err := tx.Journal().SetApplied(fc.key); err != nil {
		return err
	}
	if !whole && !fc.gone {
		return tx.Journal().SetUnread(fc.key) // gc refuses until a repair
	}
	return nil
}

// applier adds a sync's records to the cache.
type applier struct {
	tx      *index.Tx
	machine string // this machine's ID
	pins    map[cas.ID]bool
	snaps   map[cas.ID]index.Snapshot // every snapshot of the cache, by ID
	tombs   map[cas.ID][16]byte
}

func (a *applier) load() error {
	a.snaps = map[cas.ID]index.Snapshot{}
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
// not dropped, a turn record that says more than the cache's. whole is
// false when a record could not be read.
func (a *applier) commit(c remote.Commit) (whole bool, _ error) {
	whole = true
	// A commit of another machine goes to its projects; one older than
	// machines to this machine's (docs/bucket.md, "Machines").
	workdir := func(w string) string { return w }
	if c.Machine != "" && c.Machine != a.machine {
		workdir = func(w string) string { return repo.ForeignWorkdir(c.Machine, w) }
	}
	for _, r := range c.Records {
		switch r.Kind {
		case remote.RecordSnapshot:
			sn, origin, err := index.DecodeBackup(r.Data)
			if err != nil {
				whole = false // not a record this version reads
				continue
			}
			sn.Project = workdir(sn.Project)
			if err := a.snapshot(sn, r.BackupID, origin); err != nil {
				return false, err
			}
		case remote.RecordTurn:
			tr, err := index.DecodeTurnBackup(r.Data)
			if err != nil {
				whole = false
				continue
			}
			tr.BackupID, tr.Project = r.BackupID, workdir(tr.Project)
			if err := a.turn(tr); err != nil {
				return false, err
			}
		case remote.RecordWrites:
			wd, writes, err := index.DecodeWrites(r.Data)
			if err != nil {
				whole = false
				continue
			}
			if err := a.tx.ApplyWrites(workdir(wd), writes); err != nil {
				return false, err
			}
		case remote.RecordPolicy:
			p, err := index.DecodePolicy(r.Data)
			if err != nil {
				whole = false
				continue
			}
			p.Workdir = workdir(p.Workdir)
			if err := a.policy(p); err != nil {
				return false, err
			}
		}
	}
	return whole, nil
}

func (a *applier) snapshot(sn index.Snapshot, backup cas.ID, origin string) error {
	_, known := a.snaps[sn.ID]
	_, dead := a.tombs[backup]
	if known || dead || a.tx.Journal().Dropped(sn.ID) {
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

// policy applies policy record p, the later of two winning, and records
// its project if the cache lacks it (as policy does).
func (a *applier) policy(p index.Policy) error {
	if _, ok, err := a.tx.Project(p.Workdir); err != nil || !ok {
		if err != nil {
			return err
		}
		if err := a.tx.PutProject(index.Project{Workdir: p.Workdir, Created: p.Set, LastTouch: p.Set}); err != nil {
			return err
		}
	}
	return a.tx.ApplyPolicy(p)
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
	if err != nil || (ok && !repo.SaysMore(tr, cur)) {
		return err
	}
	return a.tx.PutTurn(tr)
}

// drop applies dropped marker d.
func (a *applier) drop(d droppedKey) error {
	if err := a.tx.Journal().SetDropped(d.id); err != nil {
		return err
	}
	if sn, ok := a.snaps[d.id]; ok {
		if err := a.tx.DeleteSnapshot(sn); err != nil {
			return err
		}
		delete(a.snaps, d.id)
	}
	return a.tx.Journal().SetApplied(d.key)
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

// addPackOver records pack sp in the cache. An object it holds that the
// cache locates in a doomed pack (see index.Journal.SetDoomed) is located
// in sp instead: a writer wrote it again because a gc is deleting the
// other copy.
func addPackOver(tx *index.Tx, sp cas.SalvagedPack, doomed map[[16]byte]bool) error {
	objects := tx.Objects()
	numbers := map[uint32]bool{}
	if len(doomed) > 0 {
		packs, err := objects.Packs()
		if err != nil {
			return err
		}
		for _, p := range packs {
			if doomed[p.Name] {
				numbers[p.Number] = true
			}
		}
	}
	info, err := objects.AddPack(sp.Name, sp.Size)
	if err != nil {
		return err
	}
	for _, e := range sp.Entries {
		replace := false
		if len(numbers) > 0 {
			l, err := objects.Locate(e.ID)
			if err != nil && !errors.Is(err, cas.ErrNotFound) {
				return err
			}
			replace = err == nil && numbers[l.Pack]
		}
		if err := objects.PutObject(cas.Location{Pack: info.Number, PackEntry: e}, replace); err != nil {
			return err
		}
	}
	return nil
}

// applyGCLists records the packs of new pending and deleted lists of gc
// as doomed, forgets the deleted ones with the objects the cache locates
// in them, and drops the stat cache's entries that name an object in a
// doomed pack, so that the next snapshot stores those objects again.
func applyGCLists(tx *index.Tx, lists []gcList) error {
	if len(lists) == 0 {
		return nil
	}
	deleted := map[[16]byte]bool{}
	for _, l := range lists {
		for _, name := range l.packs {
			if err := tx.Journal().SetDoomed(name); err != nil {
				return err
			}
			if l.deleted {
				deleted[name] = true
			}
		}
		if err := tx.Journal().SetApplied(l.key); err != nil {
			return err
		}
		if l.damaged != "" {
			if err := tx.Journal().SetDamaged(l.key, l.damaged); err != nil {
				return err
			}
		}
	}
	if err := forgetPacks(tx, deleted); err != nil {
		return err
	}
	objects := tx.Objects()
	doomed, err := repo.DoomedNumbers(tx)
	if err != nil {
		return err
	}
	_, err = tx.DropStatEntries(func(id cas.ID) bool {
		l, err := objects.Locate(id)
		return err == nil && doomed[l.Pack]
	})
	return err
}

// forgetPacks removes from the cache the packs named in gone, which a gc
// deleted, and the objects it locates in them.
func forgetPacks(tx *index.Tx, gone map[[16]byte]bool) error {
	if len(gone) == 0 {
		return nil
	}
	objects := tx.Objects()
	packs, err := objects.Packs()
	if err != nil {
		return err
	}
	numbers := map[uint32]bool{}
	for _, p := range packs {
		if gone[p.Name] {
			numbers[p.Number] = true
		}
	}
	if len(numbers) == 0 {
		return nil
	}
	var ids []cas.ID
	if err := objects.ForEachObject(func(l cas.Location) error {
		if numbers[l.Pack] {
			ids = append(ids, l.ID)
		}
		return nil
	}); err != nil {
		return err
	}
	for _, id := range ids {
		if err := objects.DeleteObject(id); err != nil {
			return err
		}
	}
	for n := range numbers {
		if err := objects.DeletePack(n); err != nil {
			return err
		}
	}
	return nil
}
