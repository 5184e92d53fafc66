package cas

import "context"

// FoldInline copies the objects that the object index of write transaction
// idx locates in inline packs (see PackInfo.Inline) into new packs of
// packs, written and synced before it returns (their fsync and the
// directory's), points the index at the copies and deletes the inline
// packs' records and bytes. A crash before the transaction commits leaves
// unreferenced packs, which the next sweep deletes. Unlike a sweep, a fold
// deletes no pack of the pack store, so the caller needs only the store's
// shared lock, and nothing is left to do once the transaction commits; if
// it does not, call the returned Sweep's Abort. With no inline pack it
// writes nothing. bases, when not nil, names earlier versions of the
// objects it copies, as SweepOptions.Bases does.
func FoldInline(ctx context.Context, idx IndexWriter, packs PackStore, bases func(repacked func(ID) bool) (map[ID]ID, error)) (*Sweep, error) {
	indexed, err := idx.Packs()
	if err != nil {
		return nil, err
	}
	var inline []*packUsage
	for _, p := range indexed {
		if p.Inline {
			inline = append(inline, &packUsage{info: p})
		}
	}
	sw := &Sweep{packs: packs, bases: bases, live: func(ID) bool { return true }, wholeBases: map[ID]bool{}}
	if len(inline) == 0 {
		return sw, nil
	}
	if err := sw.gatherLive(idx, inline); err != nil {
		return nil, err
	}
	return sw, sw.repack(ctx, idx, inline)
}
