package cas

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
)

// SweepOptions tune Sweep. The zero value means the defaults.
type SweepOptions struct {
	// RepackThreshold is the fraction of a pack's bytes that must be dead
	// before its live objects are copied to a new pack and it is deleted
	// (default 0.1, borg's choice). Packs with no live object are always
	// deleted. Set it below zero to repack every pack holding any dead
	// object, so that the store shrinks to its live size.
	RepackThreshold float64
	// SmallPack: packs smaller than this are merged when there are at least
	// four of them (default 1 MiB), so per-turn snapshots do not leave
	// thousands of tiny files.
	SmallPack int64
	// Required, when set, names the objects the index must hold (what kept
	// snapshots reach), and RequiredCount how many distinct ones there
	// are: PrepareSweep refuses with ErrLiveNotIndexed, before it changes
	// anything, when fewer are indexed.
	Required      func(ID) bool
	RequiredCount int
	// Bases, when set, is called once the sweep knows which objects it
	// copies (repacked says whether it copies id) and returns, for some
	// of them, an earlier version: the object at the same path in the
	// snapshot before. A copy is then stored as a delta against that
	// version (or against the base of it) when that is deltaGain times
	// smaller (see delta.go and deltaPlan).
	Bases func(repacked func(ID) bool) (map[ID]ID, error)
}

func (o SweepOptions) withDefaults() SweepOptions {
	if o.RepackThreshold == 0 {
		o.RepackThreshold = 0.1
	}
	if o.SmallPack == 0 {
		o.SmallPack = 1 << 20
	}
	return o
}

// Sweep is a prepared collection: the index changes are made in the
// caller's transaction; Finish deletes the packs once it has committed.
type Sweep struct {
	ObjectsDeleted int
	PacksDeleted   int
	PacksRewritten int

	packs       PackStore
	writer      *Writer
	bases       func(repacked func(ID) bool) (map[ID]ID, error) // SweepOptions.Bases
	live        func(ID) bool
	wholeBases  map[ID]bool // the bases of the live deltas (tally, gatherLive)
	reader      *Store      // reads the bases of the deltas repack writes
	plan        deltaPlan
	prefetch    *basePrefetch // decodes the bases' blocks ahead of the copy
	deltas      deltaEncoder
	keep        map[string]bool // packs the index names once committed
	newBytes    int64
	inlineFreed int64 // the bytes of the inline packs deleted
	committed   bool
}

type packUsage struct {
	info      PackInfo
	liveBytes int64
	deadBytes int64
	liveCount int
	live      []Location // filled only for the packs it rewrites
}

// ErrLiveNotIndexed is returned by PrepareSweep, before it changes
// anything, when the index lacks objects that SweepOptions.Required names:
// the index is damaged or the objects are lost, and nothing may be deleted.
var ErrLiveNotIndexed = errors.New("the index lacks objects that kept snapshots need")

// PrepareSweep removes from the object index of write transaction idx every
// object for which live returns false, and rewrites packs that are mostly
// dead or small, in packs; inline packs follow the same rules as pack
// files (a rewrite deletes them). New packs are written and synced before
// it returns. The caller must hold the store's exclusive lock: any pack the
// index does not name, and any pack a writer left incomplete, is deleted by
// Finish. After the transaction commits, call Finish; if it does not, call
// Abort.
func PrepareSweep(ctx context.Context, idx IndexWriter, packs PackStore, live func(ID) bool, opts SweepOptions) (*Sweep, error) {
	opts = opts.withDefaults()
	indexed, err := idx.Packs()
	if err != nil {
		return nil, err
	}
	usage := make(map[uint32]*packUsage, len(indexed))
	for _, p := range indexed {
		usage[p.Number] = &packUsage{info: p}
	}
	sw := &Sweep{packs: packs, bases: opts.Bases, wholeBases: map[ID]bool{}}
	dead, err := sw.tally(idx, usage, live, opts)
	if err != nil {
		return nil, err
	}
	sw.live = func(id ID) bool { return live(id) || sw.wholeBases[id] }
	for _, id := range dead {
		if err := idx.DeleteObject(id); err != nil {
			return nil, err
		}
	}
	sw.ObjectsDeleted = len(dead)

	var small []*packUsage
	var repack []*packUsage
	for _, p := range indexed {
		u := usage[p.Number]
		total := u.liveBytes + u.deadBytes
		switch {
		case u.liveCount == 0:
			if err := sw.dropPack(idx, p); err != nil {
				return nil, err
			}
		case u.deadBytes > 0 && float64(u.deadBytes) >= opts.RepackThreshold*float64(total):
			repack = append(repack, u)
		case p.Size < opts.SmallPack:
			small = append(small, u)
		}
	}
	if len(small) >= 4 {
		repack = append(repack, small...)
	}
	if len(repack) > 0 {
		if err := sw.gatherLive(idx, repack); err != nil {
			return nil, err
		}
		if err := sw.repack(ctx, idx, repack); err != nil {
			return nil, err
		}
	}
	after, err := idx.Packs()
	if err != nil {
		sw.Abort()
		return nil, err
	}
	sw.keep = map[string]bool{}
	for _, p := range after {
		sw.keep[p.FileName()] = true
	}
	return sw, nil
}

// tally counts every indexed object's bytes as live or dead in its pack's
// usage and returns the dead objects' IDs, noting the bases of the live
// deltas in sw.wholeBases: a base is live whatever live says of it. It
// refuses with ErrLiveNotIndexed when fewer objects than
// opts.RequiredCount are indexed and required: the one pass over the
// index that the sweep makes anyway checks that nothing a kept snapshot
// needs is missing from it.
func (sw *Sweep) tally(idx IndexWriter, usage map[uint32]*packUsage, live func(ID) bool, opts SweepOptions) ([]ID, error) {
	var dead []Location
	required := 0
	count := func(l Location, kept bool) error {
		u, size := usage[l.Pack], l.PackBytes()
		switch {
		case !kept:
			if u != nil {
				u.deadBytes += size
			}
			return nil
		case u == nil:
			return fmt.Errorf("%w: object %s is in pack %d, which the index lacks", ErrCorrupt, l.ID.Short(), l.Pack)
		}
		u.liveBytes += size
		u.liveCount++
		return nil
	}
	err := idx.ForEachObject(func(l Location) error {
		if opts.Required != nil && opts.Required(l.ID) {
			required++
		}
		if !live(l.ID) {
			dead = append(dead, l)
			return nil
		}
		sw.noteBase(l)
		return count(l, true)
	})
	if err != nil {
		return nil, err
	}
	if required < opts.RequiredCount {
		return nil, fmt.Errorf("%w: %d of %d are missing", ErrLiveNotIndexed, opts.RequiredCount-required, opts.RequiredCount)
	}
	var ids []ID
	for _, l := range dead {
		base := sw.wholeBases[l.ID]
		if err := count(l, base); err != nil {
			return nil, err
		}
		if !base {
			ids = append(ids, l.ID)
		}
	}
	return ids, nil
}

// noteBase notes the base of l, a live object, when it is a delta.
func (sw *Sweep) noteBase(l Location) {
	if l.IsDelta() {
		sw.wholeBases[l.Base] = true
	}
}

// gatherLive fills the live locations of the packs about to be rewritten
// (a second pass over the index, made only when something is rewritten:
// keeping every pack's live locations from the first would cost a large
// store more than the pass), and notes the bases of the live deltas.
func (sw *Sweep) gatherLive(idx IndexWriter, packs []*packUsage) error {
	byNumber := make(map[uint32]*packUsage, len(packs))
	for _, u := range packs {
		u.live = make([]Location, 0, u.liveCount)
		byNumber[u.info.Number] = u
	}
	return idx.ForEachObject(func(l Location) error {
		if !sw.live(l.ID) {
			return nil
		}
		sw.noteBase(l)
		if u := byNumber[l.Pack]; u != nil {
			u.live = append(u.live, l)
		}
		return nil
	})
}

func (sw *Sweep) dropPack(idx IndexWriter, p PackInfo) error {
	sw.PacksDeleted++
	if p.Inline {
		sw.inlineFreed += p.Size
	}
	return idx.DeletePack(p.Number)
}

// Abort removes the packs the sweep wrote; call it when the transaction
// does not commit.
func (sw *Sweep) Abort() {
	if sw.writer != nil && !sw.committed {
		sw.writer.Abort()
	}
}

// Finish deletes, after the transaction committed, the packs the index no
// longer names and what writers left incomplete (leftovers of crashed
// ones), makes the deletions durable and returns the bytes freed (those of
// the inline packs the transaction deleted included). It goes
// on past a pack it cannot delete and returns the first error.
func (sw *Sweep) Finish(ctx context.Context) (int64, error) {
	sw.committed = true
	freed, first := sw.packs.RemoveIncomplete(ctx)
	var gone []StoredPack
	err := sw.packs.List(ctx, func(p StoredPack) error {
		if !sw.keep[p.Name] {
			gone = append(gone, p)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, p := range gone {
		err := sw.packs.Remove(ctx, p.Name)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			if first == nil {
				first = err
			}
			continue
		}
		freed += p.Size
	}
	if err := sw.packs.Sync(ctx); err != nil && first == nil {
		first = err
	}
	return freed + sw.inlineFreed - sw.newBytes, first
}
