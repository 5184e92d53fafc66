package cas

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// The pack file format, version 2 (all integers little-endian):
//
//	header   "CKPACK" 0x02 0x00                                   8 bytes
//	object   0xB7 kind codec 0x00 rawLen:u32 storedLen:u32 id:32  44 bytes
//	         stored bytes                                          storedLen
//	block    0xB9 codec 0x00 0x00 storedLen:u32 rawLen:u32         12 bytes
//	         stored bytes: the block's plain bytes, one zstd frame  storedLen
//	         (or as they are), which are its members one after the
//	         other, each a member header
//	           0xB8 kind rawLen:u32 id[:8]                         14 bytes
//	         and the object's rawLen plain bytes
//	...      more objects and blocks, in any order
//	table    per object: id:32 kind codec offset:u32 rawLen:u32
//	         storedLen:u32 blockLen:u32 member:u32                54 bytes
//	footer   count:u32 crc32c(table, count):u32 "CKPKEND" 0x02    16 bytes
//
// Small objects are members of blocks, compressed together, which shrinks
// small source files far more than compressing each alone; large ones are
// objects of their own. A table entry of an object of its own has offset
// that of its 44-byte header and blockLen and member zero; that of a member
// has offset, codec and storedLen those of its block's header, blockLen the
// block's plain length and member the offset of its member header in the
// plain bytes. Every object and member carries its own header, so a pack
// whose table is damaged can still be read front to back: a member's ID is
// the hash of its bytes, which must start with the 8 bytes of its header.
//
// Version 3 packs (header "CKPACK" 0x03 0x00, footer magic "CKPKEND"
// 0x03) are those of a Writer that stores deltas (see delta.go): the same
// records, members that may be delta members, and 90-byte table entries,
// each a version 2 entry followed by deltaLen:u32 base:32 (zero for an
// object that is not a delta).
//
// Version 1 packs (written before blocks) have the header "CKPACK" 0x01
// 0x00, objects only, 46-byte table entries without blockLen and member and
// the footer magic "CKPKEND" 0x01; they are read as they are.
const (
	packMagic          = "CKPACK\x02\x00"
	packMagicV1        = "CKPACK\x01\x00"
	packMagicV3        = "CKPACK\x03\x00"
	packFooterMagic    = "CKPKEND\x02"
	packFooterMagicV1  = "CKPKEND\x01"
	packFooterMagicV3  = "CKPKEND\x03"
	objectMagic        = 0xB7
	blockMagic         = 0xB9
	packHeaderSize     = 8
	objectHeaderSize   = 44
	blockHeaderSize    = 12
	tableEntrySize     = 54
	tableEntrySizeV1   = 46
	tableEntrySizeV3   = 90
	packFooterSize     = 16
	packVersionOffset  = 6 // of the version byte in the header and footer magic
	footerMagicOffset  = 8
	footerVersionIndex = footerMagicOffset + 7
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// PackEntry describes one object inside a pack: an object stored alone, or
// a member of a block (BlockLen > 0).
type PackEntry struct {
	ID     ID
	Kind   Kind
	Codec  Codec  // of the object, or of its block
	Offset uint32 // of the object's header, or of its block's header
	RawLen uint32 // the object's plain size
	// StoredLen is the size of the object's stored bytes, or of its
	// block's.
	StoredLen uint32
	// BlockLen is the plain size of the object's block; 0 for an object
	// stored alone.
	BlockLen uint32
	// Member is the offset of the object's member header in its block's
	// plain bytes.
	Member uint32
	// Base, for a member stored as a delta, is the object whose plain
	// bytes its frame was compressed against, and DeltaLen the frame's
	// length (see delta.go); both zero for every other object.
	Base     ID
	DeltaLen uint32
}

// InBlock reports whether the object is a member of a block.
func (e PackEntry) InBlock() bool { return e.BlockLen > 0 }

// Valid checks what every decoder must: a known kind and codec, a size
// within MaxObjectSize (a block's within MaxBlockSize, its member inside
// it), and stored bytes no more than the plain ones (the writer stores raw
// whenever zstd does not shrink an object or block), so a damaged entry can
// never make a reader allocate more than those limits.
func (e PackEntry) Valid() bool {
	plain := e.RawLen
	if e.InBlock() {
		plain = e.BlockLen
		if plain > MaxBlockSize || uint64(e.Member)+e.span() > uint64(plain) {
			return false
		}
	}
	if e.IsDelta() && (!e.InBlock() || e.DeltaLen == 0 || e.RawLen > MaxMemberSize) {
		return false
	}
	return e.Kind.Valid() && e.Codec <= CodecZstd && e.RawLen <= MaxObjectSize && e.StoredLen <= plain &&
		(e.Codec != CodecRaw || e.StoredLen == plain)
}

// headerSize is the size of the header at Offset: the object's or its
// block's.
func (e PackEntry) headerSize() uint64 {
	if e.InBlock() {
		return blockHeaderSize
	}
	return objectHeaderSize
}

// end is the offset just past the entry's stored bytes (its block's, for
// a member).
func (e PackEntry) end() uint64 {
	return uint64(e.Offset) + e.headerSize() + uint64(e.StoredLen)
}

// PackBytes is the share of its pack the object accounts for: its header,
// stored bytes and table entry, or, for a member, its member header's and
// plain bytes' share of its block's stored bytes, and its table entry. It
// is what deleting the object frees once its pack is rewritten.
func (e PackEntry) PackBytes() int64 {
	if !e.InBlock() {
		return objectHeaderSize + int64(e.StoredLen) + tableEntrySize
	}
	block := blockHeaderSize + uint64(e.StoredLen)
	return int64(e.span()*block/uint64(e.BlockLen)) + tableEntrySize
}

func appendObjectHeader(b []byte, e PackEntry) []byte {
	b = append(b, objectMagic, byte(e.Kind), byte(e.Codec), 0)
	b = binary.LittleEndian.AppendUint32(b, e.RawLen)
	b = binary.LittleEndian.AppendUint32(b, e.StoredLen)
	return append(b, e.ID[:]...)
}

// parseObjectHeader decodes an object header; the offset is left zero.
func parseObjectHeader(b []byte) (PackEntry, error) {
	if len(b) < objectHeaderSize || b[0] != objectMagic || b[3] != 0 {
		return PackEntry{}, fmt.Errorf("%w: bad object header", ErrBadPack)
	}
	e := PackEntry{
		Kind:      Kind(b[1]),
		Codec:     Codec(b[2]),
		RawLen:    binary.LittleEndian.Uint32(b[4:]),
		StoredLen: binary.LittleEndian.Uint32(b[8:]),
	}
	copy(e.ID[:], b[12:44])
	if !e.Valid() {
		return PackEntry{}, fmt.Errorf("%w: object header has kind %d, codec %d, %d of %d bytes", ErrBadPack, e.Kind, e.Codec, e.StoredLen, e.RawLen)
	}
	return e, nil
}

// encodeTrailer returns the table and footer for entries, of version 3
// (deltas) or 2.
func encodeTrailer(entries []PackEntry, deltas bool) []byte {
	size, magic := tableEntrySize, packFooterMagic
	if deltas {
		size, magic = tableEntrySizeV3, packFooterMagicV3
	}
	b := make([]byte, 0, len(entries)*size+packFooterSize)
	for _, e := range entries {
		b = append(b, e.ID[:]...)
		b = append(b, byte(e.Kind), byte(e.Codec))
		b = binary.LittleEndian.AppendUint32(b, e.Offset)
		b = binary.LittleEndian.AppendUint32(b, e.RawLen)
		b = binary.LittleEndian.AppendUint32(b, e.StoredLen)
		b = binary.LittleEndian.AppendUint32(b, e.BlockLen)
		b = binary.LittleEndian.AppendUint32(b, e.Member)
		if deltas {
			b = binary.LittleEndian.AppendUint32(b, e.DeltaLen)
			b = append(b, e.Base[:]...)
		}
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(entries)))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	return append(b, magic...)
}

// footerEntrySize returns the table entry size the footer's magic names.
func footerEntrySize(footer []byte) (int, error) {
	switch string(footer[footerMagicOffset:]) {
	case packFooterMagic:
		return tableEntrySize, nil
	case packFooterMagicV1:
		return tableEntrySizeV1, nil
	case packFooterMagicV3:
		return tableEntrySizeV3, nil
	}
	return 0, fmt.Errorf("%w: no footer", ErrBadPack)
}

// DecodeTrailer parses the table at the end of a pack of packSize bytes
// whose last bytes are tail (the whole trailer, or more of the file before
// it), of any version. It checks the checksum and that every entry lies
// inside the pack, in order and without overlap (the members of one block
// share its place, in order inside it).
func DecodeTrailer(tail []byte, packSize int64) ([]PackEntry, error) {
	if len(tail) < packFooterSize || int64(len(tail)) > packSize {
		return nil, fmt.Errorf("%w: too short for a footer", ErrBadPack)
	}
	footer := tail[len(tail)-packFooterSize:]
	size, err := footerEntrySize(footer)
	if err != nil {
		return nil, err
	}
	count := binary.LittleEndian.Uint32(footer)
	tableLen := uint64(count) * uint64(size)
	if tableLen > uint64(len(tail)-packFooterSize) {
		return nil, fmt.Errorf("%w: table of %d entries does not fit", ErrBadPack, count)
	}
	start := len(tail) - packFooterSize - int(tableLen)
	table := tail[start : len(tail)-packFooterSize+4]
	if crc32.Checksum(table, castagnoli) != binary.LittleEndian.Uint32(footer[4:]) {
		return nil, fmt.Errorf("%w: table checksum mismatch", ErrBadPack)
	}
	dataEnd := uint64(packSize) - tableLen - packFooterSize
	entries := make([]PackEntry, count)
	next := uint64(packHeaderSize)
	var prev PackEntry
	for i := range entries {
		e := decodeTableEntry(table[i*size:], size)
		if !e.Valid() || !inPlace(e, prev, i > 0, next) || e.end() > dataEnd {
			return nil, fmt.Errorf("%w: table entry %d out of place", ErrBadPack, i)
		}
		next, prev = e.end(), e
		entries[i] = e
	}
	return entries, nil
}

// decodeTableEntry decodes one table entry of the given size.
func decodeTableEntry(b []byte, size int) PackEntry {
	e := PackEntry{Kind: Kind(b[32]), Codec: Codec(b[33])}
	copy(e.ID[:], b[:32])
	e.Offset = binary.LittleEndian.Uint32(b[34:])
	e.RawLen = binary.LittleEndian.Uint32(b[38:])
	e.StoredLen = binary.LittleEndian.Uint32(b[42:])
	if size >= tableEntrySize {
		e.BlockLen = binary.LittleEndian.Uint32(b[46:])
		e.Member = binary.LittleEndian.Uint32(b[50:])
	}
	if size == tableEntrySizeV3 {
		e.DeltaLen = binary.LittleEndian.Uint32(b[54:])
		copy(e.Base[:], b[58:])
	}
	return e
}

// inPlace reports whether entry e may follow entry prev (when there is one)
// whose stored bytes end at next: after them, or in the same block after
// prev's member.
func inPlace(e, prev PackEntry, hasPrev bool, next uint64) bool {
	if hasPrev && e.InBlock() && prev.InBlock() && e.Offset == prev.Offset {
		return e.Codec == prev.Codec && e.StoredLen == prev.StoredLen && e.BlockLen == prev.BlockLen &&
			uint64(e.Member) >= uint64(prev.Member)+prev.span()
	}
	return uint64(e.Offset) >= next
}

// ReadPackTable reads and checks the table of the pack in r of the given
// size, of any version.
func ReadPackTable(r io.ReaderAt, size int64) ([]PackEntry, error) {
	if size < packHeaderSize+packFooterSize {
		return nil, fmt.Errorf("%w: %d bytes is too short", ErrBadPack, size)
	}
	var head [packHeaderSize]byte
	if _, err := r.ReadAt(head[:], 0); err != nil {
		return nil, err
	}
	if !isPackHeader(head[:]) {
		return nil, fmt.Errorf("%w: no pack header", ErrBadPack)
	}
	var footer [packFooterSize]byte
	if _, err := r.ReadAt(footer[:], size-packFooterSize); err != nil {
		return nil, err
	}
	entrySize, err := footerEntrySize(footer[:])
	if err != nil || footer[footerVersionIndex] != head[packVersionOffset] {
		return nil, fmt.Errorf("%w: the footer does not match the header", ErrBadPack)
	}
	count := int64(binary.LittleEndian.Uint32(footer[:]))
	tailLen := count*int64(entrySize) + packFooterSize
	if tailLen > size-packHeaderSize {
		return nil, fmt.Errorf("%w: table of %d entries does not fit", ErrBadPack, count)
	}
	tail := make([]byte, tailLen)
	if _, err := r.ReadAt(tail, size-tailLen); err != nil {
		return nil, err
	}
	return DecodeTrailer(tail, size)
}

// isPackHeader reports whether b starts with a pack header of any
// version.
func isPackHeader(b []byte) bool {
	if len(b) < packHeaderSize {
		return false
	}
	switch string(b[:packHeaderSize]) {
	case packMagic, packMagicV1, packMagicV3:
		return true
	}
	return false
}

// readObject reads, checks and decodes the object e, stored alone, from
// the pack in r.
func readObject(r io.ReaderAt, e PackEntry) ([]byte, error) {
	buf := make([]byte, objectHeaderSize+int(e.StoredLen))
	if _, err := r.ReadAt(buf, int64(e.Offset)); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: object %s is cut short", ErrCorrupt, e.ID.Short())
		}
		return nil, err
	}
	h, err := parseObjectHeader(buf)
	if err != nil || h.ID != e.ID || h.Kind != e.Kind || h.Codec != e.Codec ||
		h.RawLen != e.RawLen || h.StoredLen != e.StoredLen {
		return nil, fmt.Errorf("%w: object %s header does not match the index", ErrCorrupt, e.ID.Short())
	}
	data, err := decompress(e.Codec, buf[objectHeaderSize:], e.RawLen)
	if err != nil {
		return nil, fmt.Errorf("%w: object %s: %v", ErrCorrupt, e.ID.Short(), err)
	}
	if Sum(e.Kind, data) != e.ID {
		return nil, fmt.Errorf("%w: object %s does not match its hash", ErrCorrupt, e.ID.Short())
	}
	return data, nil
}
