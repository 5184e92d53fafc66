package cas

import (
	"bytes"
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
		n += trailerCount(p.trailer)
	}
	return n
}

// trailerCount is the number of entries of a pack's trailer.
func trailerCount(trailer []byte) int {
	return (len(trailer) - packFooterSize) / tableEntrySize
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
		total += trailerCount(p.trailer)
	}
	if total == 0 {
		return nil
	}
	if err := w.checkStored(ctx, packs); err != nil {
		return err
	}
	var infos []PackInfo
	err := update(func(idx IndexWriter, _ bool) error {
		infos = nil
		for _, p := range packs {
			if _, err := DecodeTrailer(p.trailer, p.size); err != nil {
				return fmt.Errorf("cas: pack %s: %w", PackInfo{Name: p.name}.FileName(), err)
			}
			info, err := w.addPack(idx, p)
			if err != nil {
				return err
			}
			infos = append(infos, info)
		}
		return nil
	})
	if err != nil {
		return err
	}
	w.finished, w.parted = nil, true
	w.indexed = append(w.indexed, infos...)
	w.pending = map[ID]struct{}{} // the index has them
	m := max(maxObjects, 1)
	parts := min((total+m-1)/m, 1<<16)
	for i := range parts {
		lo, hi := idRange(i, parts)
		locs := partLocations(packs, infos, lo, hi)
		err := update(func(idx IndexWriter, replace bool) error {
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
// packs (recorded as infos) whose IDs' first two bytes are in [lo, hi).
// The trailers were checked (DecodeTrailer).
func partLocations(packs []*packBuilder, infos []PackInfo, lo, hi uint32) []Location {
	var locs []Location
	for i, p := range packs {
		table := p.trailer[:len(p.trailer)-packFooterSize]
		for off := 0; off+tableEntrySize <= len(table); off += tableEntrySize {
			b := table[off:]
			if k := uint32(binary.BigEndian.Uint16(b)); k < lo || k >= hi {
				continue
			}
			locs = append(locs, Location{Pack: infos[i].Number, PackEntry: decodeTableEntry(b, tableEntrySize)})
		}
	}
	slices.SortFunc(locs, func(a, b Location) int { return bytes.Compare(a.ID[:], b.ID[:]) })
	return locs
}
