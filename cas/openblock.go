package cas

import (
	"context"
	"slices"
)

// A Writer's open blocks: how objects fill them, how they are sealed,
// and the tokens that bound the blocks in memory.

// sizeBlocks makes the Writer seal its blocks at target plain bytes and
// compress up to slots at once. Call it before the first Put.
func (w *Writer) sizeBlocks(target, slots int) {
	tokens := slots + len(w.open)
	w.blockTarget, w.blocks, w.bufs = target, make(chan struct{}, tokens), newBuffers(3*tokens, target)
}

// openBlock is a block being filled: its plain bytes and its members'
// entries (ID, kind, plain length and Member set).
type openBlock struct {
	plain   []byte
	members []PackEntry
}

// dropBlock gives back the buffer and the token of block b, written or
// dropped.
func (w *Writer) dropBlock(b *openBlock) {
	w.bufs.put(b.plain)
	<-w.blocks
}

// sortByID puts the members of b, a block of chunks, in the order of
// their IDs. Parallel hashers put chunks in the order they finish; a
// block that Flush seals (all of a small snapshot's chunks) then holds
// the same bytes whatever that order was, and so does its pack, whose
// size list and status report. The old plain buffer goes back to bufs.
func (b *openBlock) sortByID(bufs *buffers) {
	if slices.IsSortedFunc(b.members, func(x, y PackEntry) int { return compareIDs(x.ID, y.ID) }) {
		return
	}
	sorted := slices.SortedFunc(slices.Values(b.members), func(x, y PackEntry) int { return compareIDs(x.ID, y.ID) })
	plain := make([]byte, 0, len(b.plain))
	for i, e := range sorted {
		end := int(uint64(e.Member) + e.span())
		sorted[i].Member = uint32(len(plain))
		plain = append(plain, b.plain[e.Member:end]...)
	}
	bufs.put(b.plain)
	b.plain, b.members = plain, sorted
}

// blockClass is the open block an object of kind joins.
func blockClass(kind Kind) int {
	if kind == KindChunk {
		return 0
	}
	return 1
}

// putMember adds object id to the open block of its class; the call that
// fills the block compresses it, outside the lock, and writes it.
func (w *Writer) putMember(ctx context.Context, kind Kind, id ID, data []byte) error {
	return w.addMember(ctx, PackEntry{ID: id, Kind: kind, RawLen: uint32(len(data))}, data)
}

// addMember is putMember of member e (its ID, kind and plain length, and
// for a delta its Base and DeltaLen) whose bytes in the block are b: its
// plain bytes, or a delta's frame.
func (w *Writer) addMember(ctx context.Context, e PackEntry, data []byte) error {
	c, id := blockClass(e.Kind), e.ID
	token := false // a token this call took: it opens a block, or gives the token back
	w.mu.Lock()
	for {
		stored, err := w.pending.has(id), error(nil)
		if !stored {
			err = w.usableLocked()
		}
		if stored || err != nil {
			w.mu.Unlock()
			if token {
				<-w.blocks
			}
			return err
		}
		if w.open[c] != nil || token {
			break
		}
		w.mu.Unlock() // wait for a token outside the lock
		select {
		case w.blocks <- struct{}{}:
			token = true
		case <-ctx.Done():
			return ctx.Err()
		}
		w.mu.Lock()
	}
	b := w.open[c]
	if b == nil {
		b = &openBlock{plain: w.bufs.plain()}
		w.open[c] = b
	} else if token {
		<-w.blocks // another Put opened the block meanwhile
	}
	e.Member = uint32(len(b.plain))
	b.members = append(b.members, e)
	b.plain = w.bufs.reserve(b.plain, int(e.span()))
	if e.IsDelta() {
		b.plain = appendDeltaHeader(b.plain, e.Kind, id, int(e.RawLen), e.Base, len(data))
	} else {
		b.plain = appendMemberHeader(b.plain, e.Kind, id, len(data))
	}
	b.plain = append(b.plain, data...)
	w.pending.add(id)
	w.stats.Objects++
	w.stats.RawBytes += int64(e.RawLen)
	full := len(b.plain) >= w.blockTarget
	if full {
		w.open[c] = nil
	}
	w.mu.Unlock()
	if !full {
		return nil
	}
	codec, stored, err := compressBlock(w.encoderFor(len(b.plain)), b.plain, w.bufs)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil && w.err == nil {
		w.err = err
	}
	return w.appendBlockLocked(ctx, b, codec, stored)
}

// appendBlockLocked writes block b, stored by codec as stored, and its
// members' entries, and gives the block's buffers back.
func (w *Writer) appendBlockLocked(ctx context.Context, b *openBlock, codec Codec, stored []byte) error {
	defer func() {
		if codec == CodecZstd {
			w.bufs.put(stored)
		}
		w.dropBlock(b)
	}()
	return w.writeBlockLocked(ctx, b.members, codec, stored, uint32(len(b.plain)))
}

// sealLocked compresses and writes the open blocks.
func (w *Writer) sealLocked(ctx context.Context) error {
	for c, b := range w.open {
		if b == nil {
			continue
		}
		w.open[c] = nil
		if c == blockClass(KindChunk) {
			b.sortByID(w.bufs) // the others' order is their one writer's
		}
		codec, stored, err := compressBlock(w.encoderFor(len(b.plain)), b.plain, w.bufs)
		if err != nil {
			w.dropBlock(b)
			w.err = err
			return err
		}
		if err := w.appendBlockLocked(ctx, b, codec, stored); err != nil {
			return err
		}
	}
	return nil
}
