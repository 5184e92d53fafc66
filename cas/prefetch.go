package cas

import (
	"context"
	"sync"
	"sync/atomic"
)

// basePrefetch decodes, on goroutines of its own (parallelism of them),
// the blocks that hold the bases a sweep reads (those of the deltas it
// copies from blocks without zstd's checksum, which it checks against
// their bases, and of the deltas it makes), in the order the
// copy first needs them, so that decoding them overlaps the copy's own
// work instead of adding to it. The bases of a collection's deltas are
// mostly the first snapshot's versions, one or two in each of its 1 MiB
// blocks: W3's collections decoded about 16 of them, 24 ms of CPU, which
// made the slowest turn slower by about as much. It stays at most
// prefetchAhead plain bytes ahead of the copy, so that the Store's block
// cache (blockCacheBytes) still holds what it decoded when the copy gets
// there. A block it cannot read is left to the copy, which reports it.
type basePrefetch struct {
	mu      sync.Mutex
	moved   sync.Cond // broadcast when copied grows or stopped is set
	copied  int64     // live objects copied so far, in copy order
	stopped bool      // the copy is over
	done    sync.WaitGroup
	reader  *Store        // the sweep's, whose block cache it fills
	need    []neededBlock // the blocks, in the order the copy needs them
}

// prefetchAhead bounds the plain bytes basePrefetch decodes ahead of the
// copy: half the Store's block cache, the other half for the blocks the
// copy is reading.
const prefetchAhead = blockCacheBytes / 2

// neededBlock is a block a sweep reads bases from: first is the position,
// in copy order, of the first live object that needs it; pack is its
// pack's reader, held until the prefetch is over.
type neededBlock struct {
	loc   Location
	first int64
	pack  *cachedPack
}

// prefetchBases starts decoding the blocks of the bases the sweep will
// read while it copies the live objects of packs, in that order (each
// pack's sorted by offset, as copyLive copies them). It locates them, and
// opens their packs, before it returns: its goroutines read pack files
// and the block cache only, never the index.
func (sw *Sweep) prefetchBases(ctx context.Context, idx Index, packs []*packUsage) *basePrefetch {
	p := &basePrefetch{reader: sw.reader}
	p.moved.L = &p.mu
	seen := map[blockKey]bool{}
	checked := map[blockKey]bool{} // blocks of deltas whose checksum checks them
	i := int64(0)
	for _, u := range packs {
		for _, l := range u.live {
			base, ok := l.Base, l.IsDelta()
			if ok {
				key := blockKey{l.Pack, l.Offset}
				c, known := checked[key]
				if !known {
					c = sw.hasChecksum(ctx, l)
					checked[key] = c
				}
				ok = !c // copyBlock checks it without its base
			} else if l.RawLen >= minDeltaSize {
				base, ok = sw.plan.base(l.ID, l.Kind)
			}
			if ok {
				if loc, err := idx.Locate(base); err == nil && loc.InBlock() && !loc.IsDelta() {
					if key := (blockKey{loc.Pack, loc.Offset}); !seen[key] {
						seen[key] = true
						p.need = append(p.need, neededBlock{loc: loc, first: i})
					}
				}
			}
			i++
		}
	}
	for k := range p.need {
		o, err := sw.reader.acquire(ctx, p.need[k].loc.Pack)
		if err != nil {
			p.need = p.need[:k] // the copy reports what cannot be read
			break
		}
		p.need[k].pack = o
	}
	if len(p.need) < 2 {
		return p // one block or none: nothing to overlap
	}
	var next atomic.Int64
	for range min(parallelism(), len(p.need)) {
		p.done.Add(1)
		go func() {
			defer p.done.Done()
			for {
				k := int(next.Add(1) - 1)
				if k >= len(p.need) || !p.wait(k) || ctx.Err() != nil {
					return
				}
				b := p.need[k]
				_, _ = sw.reader.blocks.get(blockKey{b.loc.Pack, b.loc.Offset}, func() ([]byte, error) {
					return readBlock(b.pack.r, b.loc.PackEntry)
				})
			}
		}()
	}
	return p
}

// hasChecksum reports whether the block of delta l carries zstd's
// checksum (storedBlockHasChecksum), so that copyBlock, once it matches
// (blockChecked), does not read its base.
func (sw *Sweep) hasChecksum(ctx context.Context, l Location) bool {
	if !l.InBlock() {
		return false
	}
	o, err := sw.reader.acquire(ctx, l.Pack)
	if err != nil {
		return false
	}
	defer sw.reader.release(o)
	return storedBlockHasChecksum(o.r, l.PackEntry)
}

// wait waits until block k of need may be decoded (ready), and reports
// false if the copy is over first.
func (p *basePrefetch) wait(k int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for !p.stopped {
		if p.ready(k) {
			return true
		}
		p.moved.Wait()
	}
	return false
}

// ready reports whether block k of need may be decoded: whether the copy
// has reached it, or it and the blocks before it that the copy has not
// reached fit in prefetchAhead. p.mu must be held.
func (p *basePrefetch) ready(k int) bool {
	if p.need[k].first < p.copied {
		return true
	}
	ahead := int64(p.need[k].loc.BlockLen)
	for m := k - 1; m >= 0 && p.need[m].first >= p.copied; m-- {
		ahead += int64(p.need[m].loc.BlockLen)
	}
	return ahead <= prefetchAhead
}

// advance tells the prefetch the copy has copied n more live objects.
func (p *basePrefetch) advance(n int) {
	p.mu.Lock()
	p.copied += int64(n)
	p.mu.Unlock()
	p.moved.Broadcast()
}

// finish stops the prefetch, waits for it and releases its pack readers.
func (p *basePrefetch) finish() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	p.moved.Broadcast()
	p.done.Wait()
	for _, b := range p.need {
		p.reader.release(b.pack)
	}
}
