package cas

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// Uncommitted returns the number of objects in the flushed packs not
// committed yet.
func (w *Writer) Uncommitted() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, p := range w.finished {
		n += p.count
	}
	return n
}

// keptTrailers bounds the bytes of the trailers of finished packs that a
// Writer keeps in memory until its commit; past it, a pack's trailer is
// read back from the pack then (loadTrailer). A first snapshot of a
// million files writes 57 MB of them.
var keptTrailers = 4 << 20

// loadTrailer returns the trailer of finished pack p: kept, or read back
// from the pack store.
func (w *Writer) loadTrailer(ctx context.Context, p *packBuilder) ([]byte, error) {
	if p.trailer != nil {
		return p.trailer, nil
	}
	name := PackInfo{Name: p.name}.FileName()
	r, err := w.packs.Open(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("cas: read back the table of pack %s: %w", name, err)
	}
	defer r.Close()
	b := make([]byte, p.count*w.tableEntrySize()+packFooterSize)
	if _, err := r.ReadAt(b, p.size-int64(len(b))); err != nil {
		return nil, fmt.Errorf("cas: read back the table of pack %s: %w", name, err)
	}
	return b, nil
}

// Update runs fn in a read-write transaction of the object index, with
// whether existing locations are to be overwritten (Commit's replace),
// and returns its error; the transaction commits when fn returns nil.
type Update func(fn func(idx IndexWriter, replace bool) error) error

// CommitInParts records the flushed packs and their objects in the object
// index, as Commit does, but in transactions of their own, each run by
// update: first the packs' records, then their objects in parts of about
// maxObjects by ranges of their IDs, so that each transaction holds few
// index pages (the IDs are random: a part taken in write order would
// touch most of the index's pages). It lets a big write commit its
// objects before the transaction that commits what refers to them; until
// that one commits, they are garbage a collection removes (and a pack
// whose objects a crash left out of the index is dead). Once the first
// transaction committed, the packs are the index's: Abort leaves them,
// and Commit records nothing more of them. The Writer takes no Put after
// it.
func (w *Writer) CommitInParts(ctx context.Context, update Update, maxObjects int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur != nil || w.open != [2]*openBlock{} || w.err != nil {
		return errors.New("cas: CommitInParts before a successful Flush")
	}
	packs, total := w.finished, 0
	for _, p := range packs {
		total += p.count
	}
	if total == 0 {
		return nil
	}
	if err := w.checkStored(ctx, packs); err != nil {
		return err
	}
	var infos []PackInfo
	err := update(func(idx IndexWriter, _ bool) (err error) {
		infos, err = w.addPacks(idx, packs)
		return err
	})
	if err != nil {
		return err
	}
	w.finished, w.parted = nil, true
	w.indexed = append(w.indexed, infos...)
	w.pending = pendingSet{} // the index has them
	m := max(maxObjects, 1)
	parts := min((total+m-1)/m, 1<<16)
	for i := range parts {
		lo, hi := idRange(i, parts)
		locs, err := w.partLocations(ctx, packs, infos, lo, hi)
		if err != nil {
			return err
		}
		err = update(func(idx IndexWriter, replace bool) error {
			for _, l := range locs {
				if err := idx.PutObject(l, replace); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// idRange is part i of n of the IDs by their first two bytes: from lo
// up to hi, not included (hi 1<<16 for the last).
func idRange(i, n int) (lo, hi uint32) {
	return uint32(i * (1 << 16) / n), uint32((i + 1) * (1 << 16) / n)
}

// partLocations returns, sorted by ID, the locations of the objects of
// packs (recorded as infos) whose IDs' first two bytes are in [lo, hi)
// (all of them for 0, 1<<16). Each part of CommitInParts reads every
// pack's table again, those not kept from the packs (mostly from the page
// cache, just written): holding every entry sorted by part would hold
// what the parts are there to bound.
func (w *Writer) partLocations(ctx context.Context, packs []*packBuilder, infos []PackInfo, lo, hi uint32) ([]Location, error) {
	var locs []Location
	for i, p := range packs {
		trailer, err := w.loadTrailer(ctx, p)
		if err != nil {
			return nil, err
		}
		entries, err := DecodeTrailer(trailer, p.size)
		if err != nil {
			return nil, fmt.Errorf("cas: pack %s: %w", infos[i].FileName(), err)
		}
		for _, e := range entries {
			if k := uint32(binary.BigEndian.Uint16(e.ID[:])); k >= lo && k < hi {
				locs = append(locs, Location{Pack: infos[i].Number, PackEntry: e})
			}
		}
	}
	slices.SortFunc(locs, func(a, b Location) int { return compareIDs(a.ID, b.ID) })
	return locs, nil
}
