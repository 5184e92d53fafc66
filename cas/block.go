package cas

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"
)

// Blocks: small objects are stored as members of a block, whose plain bytes
// (each member's header and bytes, one after the other) are compressed as
// one zstd frame. See the format at the top of pack.go.
const (
	memberMagic      = 0xB8
	memberHeaderSize = 14
	// memberIDSize is how much of its ID a member header holds: enough to
	// tell a damaged member (its hash does not start so) from a sound one
	// when no table names it, without storing twice the 32 bytes that no
	// compressor shrinks (the table holds the whole ID).
	memberIDSize = 8
	// MaxBlockSize bounds the plain size of a block that any reader
	// accepts, so a damaged header cannot make it allocate more.
	MaxBlockSize = 16 << 20
	// BlockTargetSize is the plain size at which a Writer seals a block
	// and compresses it. On the W3 project (GOROOT's net and crypto) the
	// chunks of the first snapshot take 4.92 MB in 1 MiB blocks, 4.83 in
	// 2 MiB and 4.63 in 4 MiB ones, but a writer holds four buffers of a
	// block's size (the open block, the one being compressed, its
	// compressed bytes and the round trip check's output), which the
	// garbage collector doubles: a first snapshot of GOROOT/src peaks at
	// 58 MB of RSS with 1 MiB blocks, 68 MB with 2 MiB and 84 MB with
	// 4 MiB (52 MB before blocks; the target is 64 MiB).
	BlockTargetSize = 1 << 20
	// MaxMemberSize is the plain size up to which an object is a member
	// of a block; larger ones are stored alone. It is the largest chunk,
	// so only large trees are stored alone.
	MaxMemberSize = 256 << 10
)

func appendBlockHeader(b []byte, codec Codec, storedLen, rawLen uint32) []byte {
	b = append(b, blockMagic, byte(codec), 0, 0)
	b = binary.LittleEndian.AppendUint32(b, storedLen)
	return binary.LittleEndian.AppendUint32(b, rawLen)
}

// parseBlockHeader decodes a block header into an entry holding the
// block's codec, stored length and plain length (BlockLen).
func parseBlockHeader(b []byte) (PackEntry, error) {
	if len(b) < blockHeaderSize || b[0] != blockMagic || b[2] != 0 || b[3] != 0 {
		return PackEntry{}, fmt.Errorf("%w: bad block header", ErrBadPack)
	}
	e := PackEntry{
		Codec:     Codec(b[1]),
		StoredLen: binary.LittleEndian.Uint32(b[4:]),
		BlockLen:  binary.LittleEndian.Uint32(b[8:]),
	}
	if e.Codec > CodecZstd || e.BlockLen < memberHeaderSize || e.BlockLen > MaxBlockSize ||
		e.StoredLen > e.BlockLen || (e.Codec == CodecRaw && e.StoredLen != e.BlockLen) {
		return PackEntry{}, fmt.Errorf("%w: block header has codec %d, %d of %d bytes", ErrBadPack, e.Codec, e.StoredLen, e.BlockLen)
	}
	return e, nil
}

func appendMemberHeader(b []byte, kind Kind, id ID, rawLen int) []byte {
	b = append(b, memberMagic, byte(kind))
	b = binary.LittleEndian.AppendUint32(b, uint32(rawLen))
	return append(b, id[:memberIDSize]...)
}

// parseMember decodes the member at offset off of a block's plain bytes:
// an entry with its kind, plain length, Member offset and the start of its
// ID (the rest zero), and its bytes (not yet checked): for a delta member,
// its Base and DeltaLen too, and its frame (parseDeltaHeader).
func parseMember(block []byte, off int) (PackEntry, []byte, error) {
	if off >= 0 && off < len(block) && block[off] == deltaMagic {
		return parseDeltaHeader(block, off)
	}
	if off < 0 || off > len(block)-memberHeaderSize || block[off] != memberMagic {
		return PackEntry{}, nil, fmt.Errorf("%w: bad member header at %d", ErrBadPack, off)
	}
	h := block[off : off+memberHeaderSize]
	e := PackEntry{Kind: Kind(h[1]), RawLen: binary.LittleEndian.Uint32(h[2:]), Member: uint32(off)}
	copy(e.ID[:memberIDSize], h[6:])
	start := off + memberHeaderSize
	if !e.Kind.Valid() || uint64(e.RawLen) > uint64(len(block)-start) {
		return PackEntry{}, nil, fmt.Errorf("%w: member at %d has kind %d and %d bytes", ErrBadPack, off, e.Kind, e.RawLen)
	}
	return e, block[start : start+int(e.RawLen)], nil
}

// memberData returns the plain bytes of member e of its block's plain
// bytes, checked against its entry and its ID: for a delta, decoded
// against its base, which base returns (see undelta).
func memberData(block []byte, e PackEntry, base BaseGetter) ([]byte, error) {
	data, err := memberBytes(block, e)
	if err != nil {
		return nil, err
	}
	if e.IsDelta() {
		if data, err = undelta(e, data, base); err != nil {
			return nil, err
		}
	}
	if Sum(e.Kind, data) != e.ID {
		return nil, fmt.Errorf("%w: object %s does not match its hash", ErrCorrupt, e.ID.Short())
	}
	return data, nil
}

// memberBytes returns the bytes of member e in its block's plain bytes,
// its plain bytes or a delta's frame, once its header matches e.
func memberBytes(block []byte, e PackEntry) ([]byte, error) {
	h, data, err := parseMember(block, int(e.Member))
	id := h.ID
	if !h.IsDelta() {
		id = e.ID
		copy(id[:memberIDSize], h.ID[:])
	}
	if err != nil || id != e.ID || h.Kind != e.Kind || h.RawLen != e.RawLen || h.Base != e.Base || h.DeltaLen != e.DeltaLen {
		return nil, fmt.Errorf("%w: object %s member header does not match the index", ErrCorrupt, e.ID.Short())
	}
	return data, nil
}

// blockChecked reports whether stored, a block's stored bytes in codec,
// is a zstd frame whose content checksum matches plain, its decoded
// bytes. The checksum is zstd's optional last field, the low 4 bytes of
// XXH64 of the plain bytes; the blocks of a Writer that stores deltas
// carry one (sweepEncoder), and a delta in a block it checks is, byte for
// byte, as the sweep that wrote it checked it against its base. It is
// checked here, where a sweep needs it, and not by the decoder: a read
// checks the members it reads by their hashes, and a repair keeps the
// sound members of a damaged block.
func blockChecked(codec Codec, stored, plain []byte) bool {
	return frameHasChecksum(codec, stored) && len(stored) >= maxFrameHeader+4 &&
		binary.LittleEndian.Uint32(stored[len(stored)-4:]) == uint32(xxhash.Sum64(plain))
}

// frameHasChecksum reports whether stored, in codec, begins a zstd frame
// whose header says it ends with a content checksum.
func frameHasChecksum(codec Codec, stored []byte) bool {
	var h zstd.Header
	return codec == CodecZstd && h.Decode(stored) == nil && h.HasCheckSum
}

// maxFrameHeader is the most bytes a zstd frame header takes (magic 4,
// descriptor 1, window 1, dictionary ID 4, content size 8).
const maxFrameHeader = 18

// storedBlockHasChecksum reports whether the block of member e, in the
// pack in r, is a zstd frame that carries a content checksum, reading only
// the head of its frame (blockChecked checks it); false when that cannot
// be read.
func storedBlockHasChecksum(r io.ReaderAt, e PackEntry) bool {
	head := make([]byte, min(blockHeaderSize+maxFrameHeader, blockHeaderSize+int(e.StoredLen)))
	if _, err := r.ReadAt(head, int64(e.Offset)); err != nil {
		return false
	}
	return frameHasChecksum(e.Codec, head[blockHeaderSize:])
}

// readBlock reads and decodes the block of member e from the pack in r and
// returns its plain bytes.
func readBlock(r io.ReaderAt, e PackEntry) ([]byte, error) {
	_, plain, err := readStoredBlock(r, e)
	return plain, err
}

// readStoredBlock is readBlock that also returns the block's stored
// bytes, as the pack holds them after its header.
func readStoredBlock(r io.ReaderAt, e PackEntry) (stored, plain []byte, _ error) {
	buf := make([]byte, blockHeaderSize+int(e.StoredLen))
	if _, err := r.ReadAt(buf, int64(e.Offset)); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, fmt.Errorf("%w: the block of object %s is cut short", ErrCorrupt, e.ID.Short())
		}
		return nil, nil, err
	}
	h, err := parseBlockHeader(buf)
	if err != nil || h.Codec != e.Codec || h.StoredLen != e.StoredLen || h.BlockLen != e.BlockLen {
		return nil, nil, fmt.Errorf("%w: the block header of object %s does not match the index", ErrCorrupt, e.ID.Short())
	}
	stored = buf[blockHeaderSize:]
	plain, err = decompress(e.Codec, stored, e.BlockLen)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: the block of object %s: %v", ErrCorrupt, e.ID.Short(), err)
	}
	return stored, plain, nil
}

// memberCount counts the members of a block's plain bytes when they fill
// it exactly, one after another; ok is false when a member header cannot
// be parsed or bytes are left over.
func memberCount(block []byte) (n int, ok bool) {
	for off := 0; off < len(block); n++ {
		e, _, err := parseMember(block, off)
		if err != nil {
			return n, false
		}
		off += int(e.span())
	}
	return n, true
}

// walkMembers calls fn with each sound member of a block's plain bytes
// (its entry, ID set, and its bytes), front to back, until a member header
// cannot be parsed; it returns fn's first error. A member is sound when the
// hash of its bytes starts as its header says. A delta member's bytes
// need its base, which may be in another pack: its entry is passed to
// delta, unchecked (Get checks it).
func walkMembers(block []byte, fn func(e PackEntry, data []byte) error, delta func(e PackEntry) error) error {
	for off := 0; off < len(block); {
		e, data, err := parseMember(block, off)
		if err != nil {
			return nil
		}
		off += int(e.span())
		if e.IsDelta() {
			if err := delta(e); err != nil {
				return err
			}
			continue
		}
		id := Sum(e.Kind, data)
		if [memberIDSize]byte(id[:]) != [memberIDSize]byte(e.ID[:]) {
			continue
		}
		e.ID = id
		if err := fn(e, data); err != nil {
			return err
		}
	}
	return nil
}
