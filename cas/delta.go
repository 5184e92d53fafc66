package cas

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Deltas: a sweep may store a member of a block as a delta against an
// earlier version of the same path, its base (SweepOptions.Bases): one
// zstd frame compressed with the base's plain bytes as its dictionary,
// which a new version of a file with a few lines edited shrinks to a few
// hundred bytes where compressing it alone gives a few KiB. A delta
// member's header names its base; so do its table entry (pack format
// version 3) and its index entry, from which a sweep keeps every base of a
// live delta alive. A base is never a delta itself (chains of one), so
// reading a delta costs one more Get, and that Get checks the base against
// its ID as every Get does before the delta's own bytes are checked
// against the delta's ID.
//
// The delta member header, in a block's plain bytes (little-endian):
//
//	0xBA kind rawLen:u32 deltaLen:u32 id:32 base:32   74 bytes
//
// followed by the deltaLen bytes of the frame; rawLen is the object's
// plain length, as in a member header. It holds the whole ID, where a
// member header holds 8 bytes of it: a delta's bytes cannot be hashed
// without its base, which may be in another pack, so a salvage of a pack
// whose table is lost (Salvage) takes its ID from its header.
const (
	deltaMagic      = 0xBA
	deltaHeaderSize = 74
	// deltaDictID is the dictionary ID the frames name; the dictionary
	// itself is the base the header names.
	deltaDictID = 1
)

// IsDelta reports whether the object is a member stored as a delta.
func (e PackEntry) IsDelta() bool { return !e.Base.IsZero() }

// span is the size of the member in its block's plain bytes: its header
// and its bytes, plain or a delta's.
func (e PackEntry) span() uint64 {
	if e.IsDelta() {
		return deltaHeaderSize + uint64(e.DeltaLen)
	}
	return memberHeaderSize + uint64(e.RawLen)
}

func appendDeltaHeader(b []byte, kind Kind, id ID, rawLen int, base ID, deltaLen int) []byte {
	b = append(b, deltaMagic, byte(kind))
	b = binary.LittleEndian.AppendUint32(b, uint32(rawLen))
	b = binary.LittleEndian.AppendUint32(b, uint32(deltaLen))
	b = append(b, id[:]...)
	return append(b, base[:]...)
}

// parseDeltaHeader decodes the delta member header at off of a block's
// plain bytes, as parseMember does a member's: its entry (kind, plain
// length, Member, ID, Base and DeltaLen) and the bytes of its frame.
func parseDeltaHeader(block []byte, off int) (PackEntry, []byte, error) {
	if off < 0 || off > len(block)-deltaHeaderSize || block[off] != deltaMagic {
		return PackEntry{}, nil, fmt.Errorf("%w: bad delta header at %d", ErrBadPack, off)
	}
	h := block[off : off+deltaHeaderSize]
	e := PackEntry{Kind: Kind(h[1]), RawLen: binary.LittleEndian.Uint32(h[2:]), Member: uint32(off),
		DeltaLen: binary.LittleEndian.Uint32(h[6:])}
	copy(e.ID[:], h[10:])
	copy(e.Base[:], h[42:])
	start := off + deltaHeaderSize
	if !e.Kind.Valid() || !e.IsDelta() || e.DeltaLen == 0 || e.RawLen > MaxMemberSize ||
		uint64(e.DeltaLen) > uint64(len(block)-start) {
		return PackEntry{}, nil, fmt.Errorf("%w: delta at %d has kind %d and %d bytes", ErrBadPack, off, e.Kind, e.DeltaLen)
	}
	return e, block[start : start+int(e.DeltaLen)], nil
}

// deltaDecoders holds zstd decoders of deltas, each set to the base of
// the delta it decodes (ResetWithOptions): making one a delta cost about
// 25 us and 41 KB (BenchmarkDeltaEncoder, whose round trip decodes each
// delta, before deltas were encoded through the encoder's stream:
// 113-127 us and 89.6 KB a delta against 91-99 us and 48.6 KB),
// paid by a sweep for each delta it copies (it checks them) and by every
// read of one. DecodeAll of a decoder of one stream starts no goroutine
// that Close must end, so a decoder the pool lets go needs nothing more.
var deltaDecoders = sync.Pool{New: func() any {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxMemberSize), zstd.IgnoreChecksum(true))
	if err != nil {
		panic(err) // only fails on invalid options
	}
	return dec
}}

// BaseGetter returns the plain bytes of the base of a delta, checked
// against its ID; a Store's bases are read as its other objects.
type BaseGetter func(id ID) ([]byte, error)

// undelta decodes the frame of delta e against its base, which base
// returns, into e's plain bytes (not yet checked against e's ID).
func undelta(e PackEntry, frame []byte, base BaseGetter) ([]byte, error) {
	if base == nil {
		return nil, fmt.Errorf("%w: object %s is a delta of %s, which cannot be read here", ErrCorrupt, e.ID.Short(), e.Base.Short())
	}
	dict, err := base(e.Base)
	if err != nil {
		return nil, fmt.Errorf("%w: object %s is a delta of %s: %v", ErrCorrupt, e.ID.Short(), e.Base.Short(), err)
	}
	dec := deltaDecoders.Get().(*zstd.Decoder)
	defer deltaDecoders.Put(dec)
	if err := dec.ResetWithOptions(nil, zstd.WithDecoderDictRaw(deltaDictID, dict)); err != nil {
		return nil, err
	}
	out, err := dec.DecodeAll(frame, make([]byte, 0, e.RawLen))
	if err != nil || uint32(len(out)) != e.RawLen {
		return nil, fmt.Errorf("%w: object %s: its delta decodes to %d bytes (%v), %d expected", ErrCorrupt, e.ID.Short(), len(out), err, e.RawLen)
	}
	return out, nil
}

// deltaGain is how many times smaller than its plain bytes a delta must
// be to be stored: a block's zstd frame shrinks source files to a third
// or a quarter on its own, and reading a delta reads its base too.
const deltaGain = 4

// minDeltaSize is the plain size below which no delta is tried: an
// object of a few hundred bytes encoded against itself, the best case,
// takes a frame of 21 bytes (zstd's frame, block and sequence headers),
// so a smaller one's delta cannot be deltaGain times smaller than it
// (TestNoDeltaUnderMinDeltaSize). On W3 a collection tried 41 objects
// under 512 bytes and made one delta of them, each try a reset of the
// encoder's tables (deltaEncoder) and a read of a base.
const minDeltaSize = deltaGain*(deltaHeaderSize+21) - memberHeaderSize

// deltaEncoder makes the deltas of one sweep, with one zstd encoder
// whose dictionary each delta resets (BenchmarkDeltaEncoder, a file of
// 9-30 KB with a line changed and one added, the round trip check
// included; 2026-11-27, pooled decoders): a new encoder a delta
// allocated 11 MB and took 1.7-2.1 ms at the default level, a reset
// 0.24-0.25 ms. It takes the fastest level, in a 128 KiB window, for
// deltas about twice as large (220 bytes against 119); on W3
// (bench/w3stores.py) the store after 40 turns was the same within the
// first pack's spread between runs. Most of a delta's time is the reset
// of the encoder's 256 KiB tables to its base, so it encodes through the
// encoder's stream, which ResetWithOptions resets to the base, and not
// EncodeAll, whose encoders a reset does not touch and which would reset
// its own again (BenchmarkDeltaEncoder, 2026-11-27 23:09 UTC, three runs
// each way: 70-92 us a delta against 121-137 us; the same frames for
// objects up to zstd's 128 KiB blocks, larger ones written in two
// blocks). It is not safe for concurrent use.
type deltaEncoder struct{ enc *zstd.Encoder }

// encode returns data compressed against base, checked by decoding it
// back, or nil when that is not deltaGain times smaller than data.
func (d *deltaEncoder) encode(data, base []byte) ([]byte, error) {
	dict := zstd.WithEncoderDictRaw(deltaDictID, base)
	out := bytes.NewBuffer(make([]byte, 0, 64+len(data)/deltaGain))
	var err error
	if d.enc == nil {
		d.enc, err = zstd.NewWriter(out, dict, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithWindowSize(128<<10),
			zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true), zstd.WithEncoderCRC(false))
	} else {
		err = d.enc.ResetWithOptions(out, dict)
	}
	if err != nil {
		return nil, err
	}
	if _, err := d.enc.Write(data); err != nil {
		return nil, err
	}
	if err := d.enc.Close(); err != nil {
		return nil, err
	}
	frame := out.Bytes()
	if deltaHeaderSize+len(frame) > (memberHeaderSize+len(data))/deltaGain {
		return nil, nil
	}
	back, err := undelta(PackEntry{RawLen: uint32(len(data))}, frame, func(ID) ([]byte, error) { return base, nil })
	if err != nil || !bytes.Equal(back, data) {
		return nil, fmt.Errorf("zstd round trip of a delta of %d bytes failed: %v", len(data), err)
	}
	return frame, nil
}

// close lets the encoder's memory go.
func (d *deltaEncoder) close() {
	if d.enc != nil {
		d.enc.Close()
	}
}

// storeDeltas makes the Writer's packs of version 3, whose members may be
// deltas (putDelta). Call it before the first Put.
func (w *Writer) storeDeltas() { w.deltas = true }

// tableEntrySize is the size of the table entries of the Writer's packs.
func (w *Writer) tableEntrySize() int {
	if w.deltas {
		return tableEntrySizeV3
	}
	return tableEntrySize
}

// putDelta adds object id, of kind and rawLen plain bytes, to the open
// block of its class as a delta against base whose frame is frame. The
// Writer must store deltas (storeDeltas).
func (w *Writer) putDelta(ctx context.Context, kind Kind, id ID, rawLen int, base ID, frame []byte) error {
	if !w.deltas {
		return errors.New("cas: a delta put to a Writer that does not store deltas")
	}
	return w.addMember(ctx, PackEntry{ID: id, Kind: kind, RawLen: uint32(rawLen), Base: base, DeltaLen: uint32(len(frame))}, frame)
}
