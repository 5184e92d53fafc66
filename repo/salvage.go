package repo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
)

// Rebuilt says what Backend.Rebuild rebuilt (the root package names it
// casckpt.RepairResult).
type Rebuilt struct {
	PacksRead      int // pack files read
	ObjectsIndexed int // distinct sound objects in the new index
	// DamagedPacks are pack files with unreadable parts: their sound
	// objects are indexed all the same. UnreadablePacks held no object
	// that could be read; each was renamed to end in ".damaged", out of
	// gc's way.
	DamagedPacks    []string
	UnreadablePacks []string
	Projects        int // projects in the new database
	Snapshots       int // snapshots in the new database
	Turns           int // turns in the new database
	// FromOldDatabase counts the snapshots the old database still held,
	// whose pins and numbers were kept; the others were rebuilt from the
	// backups of their records alone (unpinned).
	FromOldDatabase int
	// OldDatabase is where the database that was replaced is kept ("" when
	// there was none): delete it once the store has been verified.
	OldDatabase string
}

// Salvage rebuilds the records in db from the packs, for when they are
// damaged or lost: every pack is read and each object checked against its
// ID, the object index is made anew from the sound objects, and the
// snapshot records are rebuilt from the backups of their records that every
// snapshot stores in its pack, with the pins and numbers the old database
// still holds and without the snapshots it has tombstones for (see
// chooseSnapshots), and the turns from the backups of theirs (see
// chooseTurns), and each project's policy from the newest of the old
// database's record and the backups in the packs (notePolicy). A record
// kept from the old database whose backup is lost gets its backup stored
// again. The stat cache starts empty. The old
// database is kept beside the new one. The caller holds the store's
// exclusive lock.
func Salvage(ctx context.Context, db *index.DB, packs cas.PackStore, now time.Time) (Rebuilt, error) {
	var res Rebuilt
	old, err := db.ReadRemains()
	if err != nil {
		return res, err
	}
	if err := writeInlinePacks(ctx, packs, old.InlinePacks); err != nil {
		return res, err
	}
	salvaged, backups, turnBackups, err := salvagePacks(ctx, packs, &res, old.Policies)
	if err != nil {
		return res, err
	}
	snaps, projects := chooseSnapshots(old, backups, now)
	turns := chooseTurns(old, turnBackups, snaps)
	res.Projects = len(projects)
	oldIDs := map[cas.ID]bool{}
	for _, list := range old.Snapshots {
		for _, sn := range list {
			oldIDs[sn.ID] = true
		}
	}
	for _, list := range snaps {
		res.Snapshots += len(list)
		for _, sn := range list {
			if oldIDs[sn.ID] {
				res.FromOldDatabase++
			}
		}
	}
	for _, b := range backups {
		if b.origin != "" {
			old.Origins[b.origin] = b.rec.ID
		}
	}
	w, err := restoreBackups(ctx, packs, salvaged, snaps, turns, old.Origins, old.Policies)
	if err != nil {
		return res, err
	}
	res.OldDatabase, err = db.Rebuild(now, func(tx *index.Tx) error {
		n, err := indexPacks(ctx, tx, packs, salvaged)
		res.ObjectsIndexed = n
		if err != nil {
			return err
		}
		if _, err := w.Commit(ctx, tx.Objects(), false); err != nil {
			return err
		}
		if err := putRecords(tx, projects, snaps, old, backups); err != nil {
			return err
		}
		res.Turns, err = putTurns(tx, turns, old, turnBackups)
		return err
	})
	// On an error, w's packs stay: the new database may be in place (a
	// failed sync of its directory), and unreferenced packs are gc's.
	return res, err
}

// writeInlinePacks writes the inline packs that the old database still
// holds into packs, as pack files of the same names (one that is there
// already is kept), and syncs them, before the packs are read: the new
// database is made from the pack files alone. What the old database held
// in inline packs that do not read is lost with it.
func writeInlinePacks(ctx context.Context, packs cas.PackStore, inline map[[16]byte][]byte) error {
	for name, data := range inline {
		file := cas.PackInfo{Name: name}.FileName()
		w, err := packs.Create(ctx, file)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("write inline pack %s out: %w", file, err)
		}
		if _, err := w.Write(data); err != nil {
			w.Abort()
			return fmt.Errorf("write inline pack %s out: %w", file, err)
		}
		if err := w.Close(); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("write inline pack %s out: %w", file, err)
		}
	}
	if len(inline) == 0 {
		return nil
	}
	return packs.Sync(ctx)
}

// PutBackup stores the backup of snapshot record rec, from which lost
// records can be rebuilt (Salvage), with the data it describes; seq is
// the sequence number it expects.
func PutBackup(ctx context.Context, w cas.Putter, rec index.Snapshot, seq uint64, origin string) (cas.ID, error) {
	rec.Seq = seq
	return w.Put(ctx, cas.KindRecord, index.EncodeBackup(rec, origin))
}

// restoreBackups stores again, through a new Writer that it returns
// flushed, the backups of the chosen snapshot and turn records and of the
// policies that no salvaged pack holds (kept from the old database, their
// packs lost or damaged), and points the records at them: so that Verify finds every
// backup, and a later repair without the database keeps the records.
func restoreBackups(ctx context.Context, packs cas.PackStore, salvaged []cas.SalvagedPack, snaps map[string][]index.Snapshot, turns map[string][]index.Turn, origins map[string]cas.ID, policies map[string]index.Policy) (*cas.Writer, error) {
	sound := map[cas.ID]bool{}
	for _, sp := range salvaged {
		for _, e := range sp.Entries {
			sound[e.ID] = true
		}
	}
	originOf := map[cas.ID]string{}
	for origin, id := range origins {
		originOf[id] = origin
	}
	w := cas.NewWriter(packs, nil)
	err := func() error {
		for _, list := range snaps {
			for i, sn := range list {
				if sn.BackupID.IsZero() || sound[sn.BackupID] {
					continue
				}
				id, err := PutBackup(ctx, w, sn, sn.Seq, originOf[sn.ID])
				if err != nil {
					return err
				}
				list[i].BackupID = id
			}
		}
		for _, list := range turns {
			for i, tr := range list {
				if tr.BackupID.IsZero() || sound[tr.BackupID] {
					continue
				}
				id, err := w.Put(ctx, cas.KindRecord, index.EncodeTurnBackup(tr))
				if err != nil {
					return err
				}
				list[i].BackupID = id
			}
		}
		for _, pol := range policies {
			if b := index.EncodePolicyBackup(pol); !sound[cas.Sum(cas.KindRecord, b)] {
				if _, err := w.Put(ctx, cas.KindRecord, b); err != nil {
					return err
				}
			}
		}
		return w.Flush(ctx)
	}()
	if err != nil {
		w.Abort()
		return nil, fmt.Errorf("repair: store the backups of records again: %w", err)
	}
	return w, nil
}

// indexPacks records salvaged packs, of packs, in a new object index and
// returns the number of distinct objects indexed. Salvage returns deltas
// unchecked: each is read once every pack is indexed, and one that does
// not read (its base is lost, or its bytes are damaged) is replaced by a
// whole copy of another pack, or else left out, so that the next snapshot
// of files that hold it stores it again, whole (as it does any object
// lost).
func indexPacks(ctx context.Context, tx *index.Tx, packs cas.PackStore, salvaged []cas.SalvagedPack) (int, error) {
	indexed := map[cas.ID]bool{}
	numbers := make([]uint32, len(salvaged)) // each pack's in the new index
	var deltas []cas.ID
	for i, sp := range salvaged {
		info, err := cas.AddPack(tx.Objects(), sp)
		if err != nil {
			return len(indexed), err
		}
		numbers[i] = info.Number
		for _, e := range sp.Entries {
			indexed[e.ID] = true
			if e.IsDelta() {
				deltas = append(deltas, e.ID)
			}
		}
	}
	if len(deltas) == 0 {
		return len(indexed), nil
	}
	objects := cas.NewStore(packs, tx.Objects())
	defer objects.Close()
	for _, id := range deltas {
		if l, err := objects.Locate(id); err != nil || !l.IsDelta() {
			continue // a whole copy was indexed first
		}
		_, err := objects.Get(ctx, id)
		switch {
		case err == nil:
			continue
		case !errors.Is(err, cas.ErrCorrupt) && !errors.Is(err, cas.ErrNotFound):
			return len(indexed), fmt.Errorf("repair: %w", err) // not known lost: a read error
		}
		if l, ok := wholeCopy(salvaged, numbers, id); ok {
			err = tx.Objects().PutObject(l, true)
		} else {
			err = tx.Objects().DeleteObject(id)
			delete(indexed, id)
		}
		if err != nil {
			return len(indexed), err
		}
	}
	return len(indexed), ctx.Err()
}

// wholeCopy returns the location of a copy of object id that is not a
// delta, among the salvaged packs (numbered as numbers say), if any: the
// rare delta that does not read may have one.
func wholeCopy(salvaged []cas.SalvagedPack, numbers []uint32, id cas.ID) (cas.Location, bool) {
	for i, sp := range salvaged {
		for _, e := range sp.Entries {
			if e.ID == id && !e.IsDelta() {
				return cas.Location{Pack: numbers[i], PackEntry: e}, true
			}
		}
	}
	return cas.Location{}, false
}

// putRecords writes the chosen projects and snapshots, the import origins,
// the policies of the chosen projects, and the tombstones of backups still in a pack, into a new database.
func putRecords(tx *index.Tx, projects []index.Project, snaps map[string][]index.Snapshot, old index.Remains, backups []recordBackup) error {
	for _, p := range projects {
		if err := tx.PutProject(p); err != nil {
			return err
		}
		for _, sn := range snaps[p.Workdir] {
			if err := tx.InsertSnapshot(sn); err != nil {
				return err
			}
		}
	}
	for origin, id := range old.Origins {
		if err := tx.PutOrigin(origin, id); err != nil {
			return err
		}
	}
	// The newest policy of each project, from the old database or a
	// backup in a pack (salvagePacks); none for a project the new database
	// lacks.
	kept := map[string]bool{}
	for _, p := range projects {
		kept[p.Workdir] = true
	}
	for _, pol := range old.Policies {
		if !kept[pol.Workdir] {
			continue
		}
		if err := tx.PutPolicy(pol); err != nil {
			return err
		}
	}
	// Backups of deleted snapshots still in a pack stay deleted.
	for _, b := range backups {
		if _, dead := old.Tombstones[b.rec.BackupID]; dead {
			if err := tx.SetTombstone(b.rec.BackupID, b.pack); err != nil {
				return err
			}
		}
	}
	return nil
}

// recordBackup is a snapshot record rebuilt from its backup in a pack.
type recordBackup struct {
	rec    index.Snapshot // Seq is the sequence number it expected
	origin string
	pack   [16]byte // the pack it was found in
}

// turnBackup is a turn record rebuilt from its backup in a pack.
type turnBackup struct {
	rec  index.Turn
	pack [16]byte // the pack it was found in
}

// salvagePacks reads every pack in packs, returning the sound objects of
// each and the backups of snapshot and turn records among them; the
// policy backups among them go into policies (notePolicy). A pack with
// nothing readable is set aside, out of gc's way.
func salvagePacks(ctx context.Context, packs cas.PackStore, res *Rebuilt, policies map[string]index.Policy) ([]cas.SalvagedPack, []recordBackup, []turnBackup, error) {
	var names []string
	if err := packs.List(ctx, func(p cas.StoredPack) error { names = append(names, p.Name); return nil }); err != nil {
		return nil, nil, nil, fmt.Errorf("repair: %w", err)
	}
	slices.Sort(names)
	var (
		salvaged []cas.SalvagedPack
		backups  []recordBackup
		turns    []turnBackup
		seen     = map[cas.ID]bool{}
	)
	for _, file := range names {
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, err
		}
		name, _ := cas.PackName(file)
		res.PacksRead++
		sp, err := cas.Salvage(ctx, packs, file, func(pe cas.PackEntry, data []byte) error {
			if pe.Kind != cas.KindRecord || seen[pe.ID] {
				return nil
			}
			seen[pe.ID] = true
			if rec, origin, err := index.DecodeBackup(data); err == nil {
				rec.BackupID = pe.ID
				backups = append(backups, recordBackup{rec, origin, name})
			} else if tr, err := index.DecodeTurnBackup(data); err == nil {
				tr.BackupID = pe.ID
				turns = append(turns, turnBackup{tr, name})
			} else if pol, err := index.DecodePolicyBackup(data); err == nil {
				notePolicy(policies, pol)
			} // else sound bytes, unknown layout: not a backup this version reads
			return nil
		})
		switch {
		case errors.Is(err, cas.ErrBadPack):
			res.UnreadablePacks = append(res.UnreadablePacks, file)
			if err := packs.SetAside(ctx, file); err != nil {
				return nil, nil, nil, fmt.Errorf("repair: set aside %s: %w", file, err)
			}
			continue
		case err != nil:
			return nil, nil, nil, fmt.Errorf("repair: read %s: %w", file, err)
		case sp.Damaged:
			res.DamagedPacks = append(res.DamagedPacks, file)
		}
		salvaged = append(salvaged, sp)
	}
	return salvaged, backups, turns, nil
}

// notePolicy puts policy p in policies unless the one there of its
// project was set later: of a project's policy records and backups, the
// newest wins.
func notePolicy(policies map[string]index.Policy, p index.Policy) {
	if cur, ok := policies[p.Workdir]; !ok || p.Set.After(cur.Set) {
		policies[p.Workdir] = p
	}
}

// chooseSnapshots decides the snapshot records of the rebuilt index. The
// backups in the packs are checked against their hashes and the database
// is not, so every backup gives a snapshot, but those with a tombstone in
// the old database. Where the old database holds the same snapshot, its
// pin, sequence number and what it added (which its backup lacks) are kept; its records that have no backup (the
// pack is lost) are kept as they are. A snapshot whose commit a crash cut
// short comes back, whole: its pack was synced before. Sequence numbers
// are made unique, in the order the snapshots were taken.
func chooseSnapshots(old index.Remains, backups []recordBackup, now time.Time) (map[string][]index.Snapshot, []index.Project) {
	oldByID := map[cas.ID]index.Snapshot{}
	for _, list := range old.Snapshots {
		for _, sn := range list {
			oldByID[sn.ID] = sn
		}
	}
	claimed := map[cas.ID]bool{} // old records a backup stands for
	snaps := map[string][]index.Snapshot{}
	for _, b := range backups {
		if _, dead := old.Tombstones[b.rec.BackupID]; dead {
			continue
		}
		sn := b.rec
		if o, ok := oldByID[sn.ID]; ok && o.Project == sn.Project {
			sn.Seq, sn.Pinned, sn.Added = o.Seq, o.Pinned, o.Added
			claimed[o.ID] = true
		}
		snaps[sn.Project] = append(snaps[sn.Project], sn)
	}
	backedUp := map[cas.ID]bool{}
	for _, b := range backups {
		backedUp[b.rec.BackupID] = true
	}
	for workdir, list := range old.Snapshots {
		for _, o := range list {
			if !claimed[o.ID] && !backedUp[o.BackupID] {
				snaps[workdir] = append(snaps[workdir], o)
			}
		}
	}
	return snaps, chooseProjects(old, snaps, now)
}

// chooseProjects returns the project records of the rebuilt index, in
// workdir order, and numbers each project's snapshots.
func chooseProjects(old index.Remains, snaps map[string][]index.Snapshot, now time.Time) []index.Project {
	projects := maps.Clone(old.Projects)
	for workdir, list := range snaps {
		p, ok := projects[workdir]
		if !ok {
			// Its last touch is unknown: now, so that no prune takes it for
			// stale.
			p = index.Project{Workdir: workdir, LastTouch: now}
		}
		slices.SortFunc(list, func(a, b index.Snapshot) int {
			return cmp.Or(cmp.Compare(a.Seq, b.Seq), a.Time.Compare(b.Time), strings.Compare(string(a.ID[:]), string(b.ID[:])))
		})
		var prev uint64
		for i := range list {
			list[i].Seq = max(list[i].Seq, prev+1)
			prev = list[i].Seq
			if p.Created.IsZero() || list[i].Time.Before(p.Created) {
				p.Created = list[i].Time
			}
		}
		projects[workdir] = p
	}
	out := make([]index.Project, 0, len(projects))
	for _, p := range projects {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b index.Project) int { return strings.Compare(a.Workdir, b.Workdir) })
	return out
}

// chooseTurns decides the turn records of the rebuilt index, by project:
// of the backups in the packs and the old database's records of a turn,
// the one that says the most (an ended turn beats an open one; then the
// later end, then the later start). Turns with a tombstone in the old
// database stay deleted, and a turn none of whose snapshots the rebuilt
// index holds is gone with them (with its project, say), as it would have
// gone from the old database.
func chooseTurns(old index.Remains, backups []turnBackup, snaps map[string][]index.Snapshot) map[string][]index.Turn {
	kept := map[cas.ID]string{} // snapshot ID: its project
	for workdir, list := range snaps {
		for _, sn := range list {
			kept[sn.ID] = workdir
		}
	}
	type key struct{ project, id string }
	best := map[key]index.Turn{}
	consider := func(tr index.Turn) {
		if _, dead := old.Tombstones[tr.BackupID]; dead && !tr.BackupID.IsZero() {
			return
		}
		if kept[tr.Start] != tr.Project && (tr.End.IsZero() || kept[tr.End] != tr.Project) {
			return
		}
		k := key{tr.Project, tr.ID}
		if b, ok := best[k]; !ok || SaysMore(tr, b) {
			best[k] = tr
		}
	}
	for _, list := range old.Turns {
		for _, tr := range list {
			consider(tr)
		}
	}
	for _, b := range backups {
		consider(b.rec)
	}
	out := map[string][]index.Turn{}
	for k, tr := range best {
		out[k.project] = append(out[k.project], tr)
	}
	return out
}

// putTurns writes the chosen turns into a new database, with the
// tombstones of turn backups still in a pack, and returns how many turns
// it wrote.
func putTurns(tx *index.Tx, turns map[string][]index.Turn, old index.Remains, backups []turnBackup) (int, error) {
	n := 0
	for _, list := range turns {
		for _, tr := range list {
			if err := tx.PutTurn(tr); err != nil {
				return n, err
			}
			n++
		}
	}
	for _, b := range backups {
		if _, dead := old.Tombstones[b.rec.BackupID]; dead {
			if err := tx.SetTombstone(b.rec.BackupID, b.pack); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}
