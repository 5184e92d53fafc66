package cas

import (
	"cmp"
	"context"
	"fmt"
	"slices"
)

// Repacking: a sweep copies the live objects of the packs it rewrites
// into new packs, verifying each.

// mergedBlockTarget is the block size of the packs a sweep writes. They
// merge the small packs of many turns, of many projects, so a project's
// objects end up spread over blocks shared with other projects' ones, and
// reading one object decodes its whole block: list, diff and restore of
// one project in a store of 1,000 (W8) decoded three 1 MiB blocks for
// objects a store of that project alone kept in blocks of a few KiB.
// 256 KiB blocks cut that cost by four (W8's list and restore went from
// 1.6-1.7x the lone store's CPU to 1.1x); on W3, whose collections merge
// the turns' packs, they cost 0.8% of the store's size (5.79 to 5.84 MiB
// after 40 turns).
const mergedBlockTarget = 256 << 10

// repack copies the live objects of packs into new packs, verifying each,
// and points the index at the copies: each pack's in the order of their
// offsets, the blocks of the bases it reads decoded ahead
// (prefetchBases).
func (sw *Sweep) repack(ctx context.Context, idx IndexWriter, packs []*packUsage) error {
	sw.writer = NewWriter(sw.packs, nil)
	sw.writer.sizeBlocks(mergedBlockTarget, parallelism())
	sw.writer.fastSmall = false // no turn waits for a sweep
	sw.reader = NewStore(sw.packs, idx)
	defer sw.reader.Close()
	defer sw.deltas.close()
	for _, u := range packs {
		slices.SortFunc(u.live, func(a, b Location) int {
			return cmp.Or(cmp.Compare(a.Offset, b.Offset), cmp.Compare(a.Member, b.Member))
		})
	}
	if err := sw.planDeltas(idx, packs); err != nil {
		sw.Abort()
		return err
	}
	sw.prefetch = sw.prefetchBases(ctx, idx, packs)
	defer sw.prefetch.finish()
	for _, u := range packs {
		if err := sw.copyLive(ctx, idx, u); err != nil {
			sw.Abort()
			return err
		}
	}
	if err := sw.writer.Flush(ctx); err != nil {
		sw.Abort()
		return err
	}
	infos, err := sw.writer.Commit(ctx, idx, true)
	if err != nil {
		sw.Abort()
		return err
	}
	for _, in := range infos {
		sw.newBytes += in.Size
	}
	for _, u := range packs {
		if err := sw.dropPack(idx, u.info); err != nil {
			sw.Abort()
			return err
		}
		sw.PacksDeleted--
		sw.PacksRewritten++
	}
	return nil
}

// copyLive copies the live objects of one pack (a file pack or an inline
// one, whose record's deletion deletes its bytes) to the sweep's writer,
// verifying each: a block of at least keptBlockMin plain bytes whose
// members are all live as it is stored (copyBlock), the members of other
// blocks, and objects small enough to be, into new blocks (decoding each
// old block once), larger objects as they are stored.
func (sw *Sweep) copyLive(ctx context.Context, idx Index, u *packUsage) error {
	r, err := openPack(ctx, idx, sw.packs, u.info)
	if err != nil {
		return fmt.Errorf("repack %s: %w", u.info.FileName(), err)
	}
	defer r.Close()
	for live := u.live; len(live) > 0; {
		if err := ctx.Err(); err != nil {
			return err
		}
		l := live[0]
		if !l.InBlock() {
			live = live[1:]
			data, err := readObject(r, l.PackEntry)
			if err != nil {
				return fmt.Errorf("repack: %w; run verify and forget the damaged snapshots", err)
			}
			if len(data) <= MaxMemberSize {
				err = sw.putMember(ctx, l.Kind, l.ID, data)
			} else {
				err = sw.copyStored(ctx, r, l.PackEntry)
			}
			if err != nil {
				return err
			}
			sw.prefetch.advance(1)
			continue
		}
		n := 1
		for n < len(live) && live[n].InBlock() && live[n].Offset == l.Offset {
			n++
		}
		if err := sw.copyBlock(ctx, r, live[:n]); err != nil {
			return err
		}
		sw.prefetch.advance(n)
		live = live[n:]
	}
	return nil
}

// keptBlockMin is the plain size from which a sweep keeps a block whose
// members are all live as it is stored, instead of compressing its
// members again: the blocks that earlier sweeps merged (mergedBlockTarget)
// and those of first snapshots. Smaller ones, a turn's, are merged into
// new blocks. W3's collections compressed again, every time, the blocks
// of the one before (about 2 MB of plain bytes at the better level).
const keptBlockMin = mergedBlockTarget / 2

// copyBlock copies the live members of one block, live (their locations,
// in the order of their Member offsets), verifying each: the block as it
// is stored when they are all its members and it is of keptBlockMin
// plain bytes or more, else each member into the writer's open block. A
// delta is checked against its base unless its block's zstd checksum
// matches (blockChecked): then its bytes are those the sweep that wrote
// it checked against the base.
func (sw *Sweep) copyBlock(ctx context.Context, r PackReader, live []Location) error {
	stored, block, err := readStoredBlock(r, live[0].PackEntry)
	if err != nil {
		return fmt.Errorf("repack: %w; run verify and forget the damaged snapshots", err)
	}
	checked := blockChecked(live[0].Codec, stored, block)
	data := make([][]byte, len(live))
	for i, l := range live {
		if l.IsDelta() && checked {
			data[i], err = memberBytes(block, l.PackEntry)
		} else {
			data[i], err = memberData(block, l.PackEntry, sw.reader.bases(ctx))
		}
		if err != nil {
			return fmt.Errorf("repack: %w; run verify and forget the damaged snapshots", err)
		}
	}
	if n, whole := memberCount(block); whole && n == len(live) && len(block) >= keptBlockMin {
		members := make([]PackEntry, len(live))
		for i, l := range live {
			members[i] = l.PackEntry
		}
		l := live[0]
		if ok, err := sw.writer.putBlock(ctx, members, l.Codec, stored, l.BlockLen); ok || err != nil {
			return err
		}
	}
	for i, l := range live {
		if l.IsDelta() { // copied as it is: its base stays whole
			frame, _ := memberBytes(block, l.PackEntry) // checked above
			err = sw.writer.putDelta(ctx, l.Kind, l.ID, int(l.RawLen), l.Base, frame)
		} else {
			err = sw.putMember(ctx, l.Kind, l.ID, data[i])
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// copyStored copies object e, stored alone, as it is stored.
func (sw *Sweep) copyStored(ctx context.Context, r PackReader, e PackEntry) error {
	stored := make([]byte, e.StoredLen)
	if _, err := r.ReadAt(stored, int64(e.Offset)+objectHeaderSize); err != nil {
		return err
	}
	return sw.writer.putStored(ctx, e, stored)
}

// putBlock appends a whole block as it is stored (for repacking): its
// members' entries (ID, kind, plain length, Member), its codec, stored
// bytes and plain length. It returns false, writing nothing, when a
// member is pending already, which the caller then puts one by one.
func (w *Writer) putBlock(ctx context.Context, members []PackEntry, codec Codec, stored []byte, blockLen uint32) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range members {
		if w.pending.has(e.ID) {
			return false, nil
		}
	}
	if err := w.writeBlockLocked(ctx, members, codec, stored, blockLen); err != nil {
		return false, err
	}
	for _, e := range members {
		w.pending.add(e.ID)
		w.stats.Objects++
		w.stats.RawBytes += int64(e.RawLen)
	}
	return true, nil
}

// putStored appends an already compressed object (for repacking).
func (w *Writer) putStored(ctx context.Context, e PackEntry, stored []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending.has(e.ID) {
		return nil
	}
	return w.appendLocked(ctx, e, stored)
}
