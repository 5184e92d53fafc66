package cas

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/casckpt/casckpt/internal/osfs"
)

// PackTargetSize is the size at which a Writer closes a pack and starts the
// next one.
const PackTargetSize = 8 << 20

// statParallel bounds the checks of Commit in flight.
const statParallel = 8

// packWriteBuffer is how much of a pack a Writer gathers before writing:
// small, because a turn's pack is often a few KiB and every buffer byte a
// short-lived process touches costs it a page fault.
const packWriteBuffer = 64 << 10

// Existing answers whether an object is already stored. *Store implements it.
type Existing interface {
	Has(id ID) (bool, error)
}

// WriteStats counts what a Writer stored.
type WriteStats struct {
	Objects     int   // new objects written
	RawBytes    int64 // their plain size
	StoredBytes int64 // their size in packs
}

// Writer appends new objects to fresh packs: objects of up to MaxMemberSize
// as members of blocks (one open block for chunks, one for trees and
// records, so that reading trees decodes few blocks), larger ones alone.
// Put is safe for concurrent use; Flush, Commit and Abort are not, and are
// called once the Puts are done.
type Writer struct {
	packs       PackStore
	existing    Existing
	blockTarget int  // the plain size at which a block is sealed
	fastSmall   bool // blocks under smallBlock take the fastest level
	bulk        bool // full blocks take the default level (SetBulk)
	deltas      bool // its packs may hold deltas: version 3 (storeDeltas)
	inlineMax   int64

	mu      sync.Mutex
	pending pendingSet
	cur     *packBuilder
	open    [2]*openBlock // by blockClass
	// blocks holds a token for each of the Writer's blocks in memory,
	// open or being compressed and written: at most one open block of
	// each class and the compressions in flight. A Put that would open
	// a block waits for a token, so that many more readers than encoders
	// keep no blocks waiting for one, and the Writer's buffers
	// (each block's plain, compressed and round-tripped bytes) are at
	// most three a token.
	blocks   chan struct{}
	bufs     *buffers
	finished []*packBuilder
	indexed  []PackInfo // the packs CommitInParts recorded
	// trailerBytes sums the trailers of the packs finished (see
	// keptTrailers).
	trailerBytes int
	parted       bool // CommitInParts ran: no more Puts
	committed    bool
	stats        WriteStats
	err          error // sticky: a failed pack write fails the Writer
}

var _ Putter = (*Writer)(nil)

// NewWriter returns a Writer that stores into packs every object that
// existing does not hold. existing may be nil (store all).
func NewWriter(packs PackStore, existing Existing) *Writer {
	w := &Writer{packs: packs, existing: existing, fastSmall: true}
	w.sizeBlocks(BlockTargetSize, parallelism())
	return w
}

// SetInline makes the Writer keep each pack of at most max bytes in
// memory and its Commit store it in the object index, as an inline pack,
// instead of in the pack store (see the package doc). A pack that grows
// past max is written to the pack store as usual. Call it before the
// first Put; max <= 0 turns inline packs off (the default).
func (w *Writer) SetInline(max int64) { w.inlineMax = max }

// packBuilder is a pack being written: into mem while it may still be
// inline, else through buf into w, a pack of the pack store.
type packBuilder struct {
	name    [16]byte
	w       PackWriter
	buf     *bufio.Writer
	mem     *bytes.Buffer
	size    int64
	entries []PackEntry // until the pack is finished
	count   int         // its entries, once finished
	// trailer is a finished pack's table and footer: its entries, in the
	// pack's own compact form, until the pack is committed; nil once the
	// Writer's trailers passed keptTrailers (loadTrailer reads it back).
	trailer []byte
	inline  []byte // the bytes of a finished inline pack
}

// write appends b to the pack.
func (p *packBuilder) write(b []byte) error {
	var err error
	if p.mem != nil {
		_, err = p.mem.Write(b)
	} else {
		_, err = p.buf.Write(b)
	}
	if err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	return nil
}

// Put stores data unless it is stored already or pending in this Writer.
func (w *Writer) Put(ctx context.Context, kind Kind, data []byte) (ID, error) {
	if err := ctx.Err(); err != nil {
		return ID{}, err
	}
	if len(data) > MaxObjectSize {
		return ID{}, fmt.Errorf("object of %d bytes is over the %d-byte limit", len(data), MaxObjectSize)
	}
	id := Sum(kind, data)
	w.mu.Lock()
	dup := w.pending.has(id)
	w.mu.Unlock()
	if dup {
		return id, nil
	}
	if w.existing != nil {
		has, err := w.existing.Has(id)
		if err != nil || has {
			return id, err
		}
	}
	if len(data) <= MaxMemberSize {
		return id, w.putMember(ctx, kind, id, data)
	}
	codec, stored, err := compress(data)
	if err != nil {
		return ID{}, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending.has(id) {
		return id, nil
	}
	if err := w.appendLocked(ctx, PackEntry{ID: id, Kind: kind, Codec: codec, RawLen: uint32(len(data)), StoredLen: uint32(len(stored))}, stored); err != nil {
		return ID{}, err
	}
	w.stats.Objects++
	w.stats.RawBytes += int64(len(data))
	return id, nil
}

// writeBlockLocked writes a block of blockLen plain bytes, stored by
// codec as stored, and the entries of its members.
func (w *Writer) writeBlockLocked(ctx context.Context, members []PackEntry, codec Codec, stored []byte, blockLen uint32) error {
	hdr := appendBlockHeader(make([]byte, 0, blockHeaderSize), codec, uint32(len(stored)), blockLen)
	off, err := w.writeRecordLocked(ctx, hdr, stored)
	if err != nil {
		return err
	}
	for _, e := range members {
		e.Codec, e.Offset, e.StoredLen, e.BlockLen = codec, off, uint32(len(stored)), blockLen
		w.cur.entries = append(w.cur.entries, e)
	}
	return w.endRecordLocked(ctx)
}

// usableLocked returns why the Writer takes no more objects, if it does not.
func (w *Writer) usableLocked() error {
	if w.err != nil {
		return w.err
	}
	if w.committed {
		return errors.New("cas: Put after Commit")
	}
	if w.parted {
		return errors.New("cas: Put after CommitInParts")
	}
	return nil
}

// writeRecordLocked appends a header and stored bytes to the current pack,
// starting one if needed, and returns the header's offset.
func (w *Writer) writeRecordLocked(ctx context.Context, hdr, stored []byte) (uint32, error) {
	if err := w.usableLocked(); err != nil {
		return 0, err
	}
	if w.cur == nil {
		if w.err = w.startPack(ctx); w.err != nil {
			return 0, w.err
		}
	}
	p := w.cur
	n := int64(len(hdr) + len(stored))
	if p.mem != nil && p.size+n > w.inlineMax {
		if w.err = w.spill(ctx, p); w.err != nil {
			return 0, w.err
		}
	}
	off := uint32(p.size)
	if w.err = p.write(hdr); w.err != nil {
		return 0, w.err
	}
	if w.err = p.write(stored); w.err != nil {
		return 0, w.err
	}
	p.size += n
	w.stats.StoredBytes += n
	return off, nil
}

// endRecordLocked closes the current pack once it is full.
func (w *Writer) endRecordLocked(ctx context.Context) error {
	if w.cur.size >= PackTargetSize {
		w.err = w.finishPack(ctx)
	}
	return w.err
}

func (w *Writer) appendLocked(ctx context.Context, e PackEntry, stored []byte) error {
	off, err := w.writeRecordLocked(ctx, appendObjectHeader(make([]byte, 0, objectHeaderSize), e), stored)
	if err != nil {
		return err
	}
	e.Offset = off
	w.cur.entries = append(w.cur.entries, e)
	w.pending.add(e.ID)
	return w.endRecordLocked(ctx)
}

func (w *Writer) startPack(ctx context.Context) error {
	p := &packBuilder{}
	if _, err := rand.Read(p.name[:]); err != nil {
		return err
	}
	p.mem = bytes.NewBufferString(packMagic)
	if w.deltas {
		p.mem = bytes.NewBufferString(packMagicV3)
	}
	p.size = packHeaderSize
	if w.inlineMax <= 0 {
		if err := w.spill(ctx, p); err != nil {
			return err
		}
	}
	w.cur = p
	return nil
}

// spill creates pack p in the pack store and moves the bytes written so
// far there: p is no longer inline.
func (w *Writer) spill(ctx context.Context, p *packBuilder) error {
	pw, err := w.packs.Create(ctx, PackInfo{Name: p.name}.FileName())
	if err != nil {
		return fmt.Errorf("create pack: %w", err)
	}
	p.w = pw
	p.buf = bufio.NewWriterSize(pw, packWriteBuffer)
	if _, err := p.buf.Write(p.mem.Bytes()); err != nil {
		pw.Abort()
		p.w = nil
		return fmt.Errorf("write pack: %w", err)
	}
	p.mem = nil
	return nil
}

// finishPack writes the trailer and completes the current pack.
func (w *Writer) finishPack(ctx context.Context) error {
	p := w.cur
	w.cur = nil
	trailer := encodeTrailer(p.entries, w.deltas)
	p.entries, p.trailer, p.count = nil, trailer, len(p.entries)
	if p.mem != nil && p.size+int64(len(trailer)) <= w.inlineMax {
		p.mem.Write(trailer)
		p.inline, p.mem = p.mem.Bytes(), nil
		p.size += int64(len(trailer))
		w.finished = append(w.finished, p)
		return nil
	}
	if p.mem != nil {
		if err := w.spill(ctx, p); err != nil {
			return err
		}
	}
	err := func() error {
		if _, err := p.buf.Write(trailer); err != nil {
			return err
		}
		if err := p.buf.Flush(); err != nil {
			return err
		}
		return p.w.Close()
	}()
	if err != nil {
		p.w.Abort()
		return fmt.Errorf("write pack: %w", err)
	}
	p.size += int64(len(trailer))
	p.buf, p.w = nil, nil // a finished pack's buffer is not kept: one per pack adds up
	if w.trailerBytes += len(trailer); w.trailerBytes > keptTrailers {
		p.trailer = nil
	}
	w.finished = append(w.finished, p)
	return nil
}

// Flush completes the open pack and makes every pack durable (the pack
// store's Sync): after it returns nil the new objects are stored, ready for
// Commit.
func (w *Writer) Flush(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if err := w.sealLocked(ctx); err != nil {
		return err
	}
	w.bufs.drop() // the Puts are done: the commit that follows needs the memory
	if w.cur != nil {
		if w.err = w.finishPack(ctx); w.err != nil {
			return w.err
		}
	}
	var names []string // of the packs in the pack store
	for _, p := range w.finished {
		if p.inline == nil {
			names = append(names, PackInfo{Name: p.name}.FileName())
		}
	}
	if len(names) == 0 {
		return nil // nothing, or only inline packs: Commit stores them
	}
	if ps, ok := w.packs.(PackSyncer); ok {
		w.err = ps.SyncPacks(ctx, names)
	} else {
		w.err = w.packs.Sync(ctx)
	}
	return w.err
}

// Stats returns what the Writer stored so far.
func (w *Writer) Stats() WriteStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats
}

// Commit records the flushed packs and their objects in the object index
// of the caller's write transaction. Objects that another writer committed
// meanwhile keep their first location; with replace, existing locations are
// overwritten (repacking). Every flushed pack must still be stored (each is
// checked with the pack store's Stat). The transaction's commit is the
// point at which the objects become visible; if it fails, call Abort. It
// returns the records of the packs it recorded and of those CommitInParts
// recorded before.
func (w *Writer) Commit(ctx context.Context, idx IndexWriter, replace bool) ([]PackInfo, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur != nil || w.open != [2]*openBlock{} || w.err != nil {
		return nil, errors.New("cas: Commit before a successful Flush")
	}
	if err := w.checkStored(ctx, w.finished); err != nil {
		return nil, err
	}
	infos, err := w.indexPacksLocked(ctx, idx, w.finished, replace)
	if err != nil {
		return nil, err
	}
	w.committed = true
	return append(w.indexed, infos...), nil
}

// checkStored makes sure that every pack of packs not inline is still
// stored: a reference to a pack that is gone (the store was cleared, or a
// sweep took it) must never be committed. The checks go out at once: in a
// bucket each is a HEAD, a round trip.
func (w *Writer) checkStored(ctx context.Context, packs []*packBuilder) error {
	var g errgroup.Group
	g.SetLimit(statParallel)
	for _, p := range packs {
		if p.inline != nil {
			continue // in memory: nothing can take it
		}
		name := PackInfo{Name: p.name}.FileName()
		g.Go(func() error {
			if _, err := w.packs.Stat(ctx, name); err != nil {
				return fmt.Errorf("cas: pack %s vanished before its commit (was the store cleared?); try again: %w", name, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// indexPacksLocked records finished packs in idx and their objects, in
// the order of their IDs, the index's keys: a B+tree page then takes each
// key at its end, where random order moved half the page for every key
// (a first snapshot of 11k files spent 30 ms on it).
func (w *Writer) indexPacksLocked(ctx context.Context, idx IndexWriter, packs []*packBuilder, replace bool) ([]PackInfo, error) {
	infos, err := w.addPacks(idx, packs)
	if err != nil {
		return nil, err
	}
	locs, err := w.partLocations(ctx, packs, infos, 0, 1<<16)
	if err != nil {
		return nil, err
	}
	for _, l := range locs {
		if err := idx.PutObject(l, replace); err != nil {
			return nil, err
		}
	}
	return infos, nil
}

// addPacks records finished packs in idx (addPack) and returns their
// records.
func (w *Writer) addPacks(idx IndexWriter, packs []*packBuilder) ([]PackInfo, error) {
	infos := make([]PackInfo, 0, len(packs))
	for _, p := range packs {
		info, err := w.addPack(idx, p)
		if err != nil {
			return nil, err
		}
		infos = append(infos, info)
	}
	return infos, nil
}

// addPack records finished pack p in idx: an inline pack with its bytes.
func (w *Writer) addPack(idx IndexWriter, p *packBuilder) (PackInfo, error) {
	if p.inline != nil {
		return idx.AddInlinePack(p.name, p.inline)
	}
	return idx.AddPack(p.name, p.size)
}

// Abort removes the Writer's packs. Call it when the objects will not be
// committed (an error, or a failed transaction). It must not be called
// after a successful transaction commit. It runs to the end whatever the
// caller's context: what it cannot remove, the next sweep does.
func (w *Writer) Abort() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur != nil && w.cur.w != nil {
		w.cur.w.Abort()
	}
	w.cur = nil
	for c, b := range w.open {
		if b != nil {
			w.open[c] = nil
			w.dropBlock(b)
		}
	}
	for _, p := range w.finished {
		if p.inline == nil {
			w.packs.Remove(context.Background(), PackInfo{Name: p.name}.FileName())
		}
	}
	w.finished = nil
	if w.err == nil {
		w.err = errors.New("cas: writer aborted")
	}
}

// SyncDir fsyncs a directory so that renames and creations in it are
// durable (osfs.SyncDir: nothing to sync on Windows).
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = osfs.SyncDir(d)
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
