package casckpt

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
)

// RepairResult says what Repair rebuilt.
type RepairResult struct {
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
	// FromOldDatabase counts the snapshots the old database still held,
	// whose pins and numbers were kept; the others were rebuilt from the
	// copies of their records alone (unpinned).
	FromOldDatabase int
	// OldDatabase is where the database that was replaced is kept ("" when
	// there was none): delete it once the store has been verified.
	OldDatabase string
}

// Repair rebuilds the store's database from the packs, for when it is
// damaged or lost: every pack is read and each object checked against its
// ID, the object index is made anew from the sound objects, and the
// snapshot records are rebuilt from the copies of their records that every
// snapshot stores in its pack, with the pins and numbers the old database
// still holds and without the snapshots it lists as dropped (see
// chooseSnapshots). The stat cache starts empty. The old database is kept
// beside the new one. Run Verify afterwards: a snapshot whose data was in
// an unreadable part of a pack is reported damaged.
func (s *Store) Repair(ctx context.Context) (RepairResult, error) {
	var res RepairResult
	if _, err := os.Stat(s.packsDir()); errors.Is(err, os.ErrNotExist) {
		return res, nil // nothing stored: nothing to repair
	}
	ss, err := s.begin(ctx, true, false)
	if err != nil {
		return res, err
	}
	defer ss.end()
	if ss.lock == nil {
		return res, nil // the store was cleared meanwhile: nothing to repair
	}

	// Databases a killed repair or creation left half made.
	if leftovers, err := filepath.Glob(s.dbPath() + ".tmp-*"); err == nil {
		for _, f := range leftovers {
			_ = os.Remove(f)
		}
	}
	old, err := readOldIndex(s.dbPath(), s.opts.LockTimeout)
	if err != nil {
		return res, err
	}
	packs, copies, err := salvagePacks(ctx, s.packsDir(), &res)
	if err != nil {
		return res, err
	}
	snaps, projects := chooseSnapshots(old, copies, s.opts.Now())
	res.Projects = len(projects)
	for _, list := range snaps {
		res.Snapshots += len(list)
		for _, sn := range list {
			if _, ok := old.byID[sn.ID]; ok {
				res.FromOldDatabase++
			}
		}
	}
	origins := old.origins
	for _, c := range copies {
		if c.origin != "" {
			origins[c.origin] = c.rec.ID
		}
	}

	res.OldDatabase, err = index.Rebuild(s.dbPath(), s.opts.Now(), func(tx *bolt.Tx) error {
		indexed := map[cas.ID]bool{}
		for _, sp := range packs {
			if _, err := cas.AddPack(tx, sp); err != nil {
				return err
			}
			for _, e := range sp.Entries {
				indexed[e.ID] = true
			}
		}
		res.ObjectsIndexed = len(indexed)
		for _, p := range projects {
			if err := index.PutProject(tx, p); err != nil {
				return err
			}
			for _, sn := range snaps[p.Workdir] {
				if err := index.InsertSnapshot(tx, sn); err != nil {
					return err
				}
			}
		}
		for origin, id := range origins {
			if err := index.PutOrigin(tx, origin, id); err != nil {
				return err
			}
		}
		// Copies of dropped snapshots still in a pack stay dropped.
		for _, c := range copies {
			if _, dropped := old.dropped[c.rec.RecordID]; dropped {
				if err := index.SetDropped(tx, c.rec.RecordID, c.pack); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return res, err
}

// oldIndex is what could be read of the database being replaced.
type oldIndex struct {
	projects map[string]index.Project    // by workdir
	snaps    map[string][]index.Snapshot // projects whose snapshots read whole
	origins  map[string]cas.ID
	dropped  map[cas.ID][16]byte       // record copies of dropped snapshots
	byID     map[cas.ID]index.Snapshot // the snapshots in snaps
}

// readOldIndex reads what it can of a possibly damaged database: each part
// that fails to read (an error, or a panic of bbolt on a damaged page) is
// left out. A database that a newer casckpt wrote is refused (its records
// and pins would be lost in a rebuild to this version's format).
func readOldIndex(path string, timeout time.Duration) (oldIndex, error) {
	old := oldIndex{projects: map[string]index.Project{}, snaps: map[string][]index.Snapshot{}, origins: map[string]cas.ID{}, dropped: map[cas.ID][16]byte{}, byID: map[cas.ID]index.Snapshot{}}
	var db *bolt.DB
	guard := func(fn func() error) (err error) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%v", r)
			}
		}()
		return fn()
	}
	err := guard(func() (err error) { db, err = index.OpenRead(path, timeout); return err })
	if errors.Is(err, index.ErrNewer) {
		return old, fmt.Errorf("repair refused: %w", err)
	}
	if err != nil || db == nil {
		return old, nil
	}
	defer guard(db.Close)
	var projects []index.Project
	_ = guard(func() error {
		return db.View(func(tx *bolt.Tx) (err error) { projects, err = index.Projects(tx); return err })
	})
	for _, p := range projects {
		old.projects[p.Workdir] = p
		var list []index.Snapshot
		if guard(func() error {
			return db.View(func(tx *bolt.Tx) (err error) { list, err = index.Snapshots(tx, p.Workdir); return err })
		}) == nil {
			old.snaps[p.Workdir] = list
			for _, sn := range list {
				old.byID[sn.ID] = sn
			}
		}
	}
	var origins map[string]cas.ID
	if guard(func() error {
		return db.View(func(tx *bolt.Tx) (err error) { origins, err = index.Origins(tx); return err })
	}) == nil {
		old.origins = origins
	}
	var dropped map[cas.ID][16]byte
	if guard(func() error {
		return db.View(func(tx *bolt.Tx) (err error) { dropped, err = index.Dropped(tx); return err })
	}) == nil {
		old.dropped = dropped
	}
	return old, nil
}

// recordCopy is a snapshot record rebuilt from its copy in a pack.
type recordCopy struct {
	rec    index.Snapshot // Seq is the sequence number it expected
	origin string
	pack   [16]byte // the pack it was found in
}

// salvagePacks reads every pack file in dir, returning the sound objects of
// each and the record copies among them. A pack with nothing readable is
// renamed out of gc's way.
func salvagePacks(ctx context.Context, dir string, res *RepairResult) ([]cas.SalvagedPack, []recordCopy, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("repair: %w", err)
	}
	var (
		packs  []cas.SalvagedPack
		copies []recordCopy
		seen   = map[cas.ID]bool{}
	)
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		name, ok := cas.PackName(e.Name())
		if !ok {
			continue
		}
		res.PacksRead++
		p := filepath.Join(dir, e.Name())
		sp, err := cas.Salvage(p, func(pe cas.PackEntry, data []byte) error {
			if pe.Kind != cas.KindRecord || seen[pe.ID] {
				return nil
			}
			seen[pe.ID] = true
			rec, origin, err := index.DecodeCopy(data)
			if err != nil {
				return nil // sound bytes, unknown layout: not a copy this version reads
			}
			rec.RecordID = pe.ID
			copies = append(copies, recordCopy{rec, origin, name})
			return nil
		})
		switch {
		case errors.Is(err, cas.ErrBadPack):
			res.UnreadablePacks = append(res.UnreadablePacks, e.Name())
			if err := os.Rename(p, p+".damaged"); err != nil {
				return nil, nil, fmt.Errorf("repair: set aside %s: %w", e.Name(), err)
			}
			continue
		case err != nil:
			return nil, nil, fmt.Errorf("repair: read %s: %w", e.Name(), err)
		case sp.Damaged:
			res.DamagedPacks = append(res.DamagedPacks, e.Name())
		}
		packs = append(packs, sp)
	}
	return packs, copies, nil
}

// chooseSnapshots decides the snapshot records of the rebuilt index. The
// copies in the packs are checked against their hashes and the database is
// not, so every copy gives a snapshot, but those of snapshots the old
// database lists as dropped. Where the old database holds the same
// snapshot, its pin and sequence number are kept; its records that have no
// copy (the pack is lost) are kept as they are. A snapshot whose commit a
// crash cut short comes back, whole: its pack was synced before. Sequence
// numbers are made unique, in the order the snapshots were taken.
func chooseSnapshots(old oldIndex, copies []recordCopy, now time.Time) (map[string][]index.Snapshot, []index.Project) {
	claimed := map[cas.ID]bool{} // old records a copy stands for
	snaps := map[string][]index.Snapshot{}
	for _, c := range copies {
		if _, dropped := old.dropped[c.rec.RecordID]; dropped {
			continue
		}
		sn := c.rec
		if o, ok := old.byID[sn.ID]; ok && o.Project == sn.Project {
			sn.Seq, sn.Pinned = o.Seq, o.Pinned
			claimed[o.ID] = true
		}
		snaps[sn.Project] = append(snaps[sn.Project], sn)
	}
	byCopy := map[cas.ID]bool{}
	for _, c := range copies {
		byCopy[c.rec.RecordID] = true
	}
	for workdir, list := range old.snaps {
		for _, o := range list {
			if !claimed[o.ID] && !byCopy[o.RecordID] {
				snaps[workdir] = append(snaps[workdir], o)
			}
		}
	}
	projects := map[string]index.Project{}
	for workdir, p := range old.projects {
		projects[workdir] = p
	}
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
	return snaps, out
}
