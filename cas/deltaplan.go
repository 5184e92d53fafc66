package cas

import "context"

// deltaPlan is which of the objects a sweep copies it stores as deltas,
// and against what (see delta.go).
type deltaPlan struct {
	hints   map[ID]ID       // earlier versions (SweepOptions.Bases)
	copying map[ID]Location // what the sweep copies, where it is now
	idx     Index
	live    func(ID) bool
	whole   map[ID]bool // the bases of live deltas: never deltas
}

// maxHops bounds how many hints deltaPlan.base follows.
const maxHops = 16

// planDeltas makes the sweep's deltaPlan for the live objects of packs,
// asking SweepOptions.Bases for hints, and makes its Writer store deltas
// when it may write one (a hint, or a delta it copies).
func (sw *Sweep) planDeltas(idx IndexWriter, packs []*packUsage) error {
	copying := map[ID]Location{}
	deltas := false
	for _, u := range packs {
		for _, l := range u.live {
			copying[l.ID] = l
			deltas = deltas || l.IsDelta()
		}
	}
	var hints map[ID]ID
	if sw.bases != nil {
		var err error
		if hints, err = sw.bases(func(id ID) bool { _, ok := copying[id]; return ok }); err != nil {
			return err
		}
	}
	if deltas || len(hints) > 0 {
		sw.writer.storeDeltas()
	}
	sw.plan = deltaPlan{hints: hints, copying: copying, idx: idx, live: sw.live, whole: sw.wholeBases}
	return nil
}

// base returns the object that object id, of kind, which the sweep
// copies, is to be a delta of, if any: the earlier version its hint
// names, or, when that one is to be a delta itself (it has a hint) or is
// one, the base it has or will have, so that no base is a delta. It must
// be live, of the same kind, small enough to be a member, and not id.
// An object that is the base of a live delta stays whole.
func (p *deltaPlan) base(id ID, kind Kind) (ID, bool) {
	if p.whole[id] {
		return ID{}, false
	}
	b, ok := p.hints[id]
	for hops := 0; ok; hops++ {
		if hops == maxHops {
			return ID{}, false
		}
		l, copied := p.copying[b]
		if copied && !l.IsDelta() && !p.whole[b] {
			if next, hinted := p.hints[b]; hinted {
				b = next
				continue
			}
		}
		var err error
		if !copied {
			if l, err = p.idx.Locate(b); err != nil {
				return ID{}, false
			}
		}
		if l.IsDelta() {
			if b = l.Base; b != id {
				if l, err = p.idx.Locate(b); err != nil || l.IsDelta() {
					return ID{}, false
				}
			}
		}
		return b, b != id && l.Kind == kind && l.RawLen <= MaxMemberSize && p.live(b)
	}
	return ID{}, false
}

// putMember copies object id, of kind, whose plain bytes are data, into
// the sweep's Writer: as a delta when the plan gives it a base, it is of
// minDeltaSize bytes or more and the delta is deltaGain times smaller
// (deltaEncoder.encode), else whole. A base that cannot be read leaves the
// object whole.
func (sw *Sweep) putMember(ctx context.Context, kind Kind, id ID, data []byte) error {
	if base, ok := sw.plan.base(id, kind); ok && len(data) >= minDeltaSize {
		if b, err := sw.reader.Get(ctx, base); err == nil {
			frame, err := sw.deltas.encode(data, b)
			if err != nil {
				return err
			}
			if frame != nil {
				return sw.writer.putDelta(ctx, kind, id, len(data), base, frame)
			}
		}
	}
	return sw.writer.putMember(ctx, kind, id, data)
}
