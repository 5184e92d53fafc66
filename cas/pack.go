package cas

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// The pack file format, version 1 (all integers little-endian):
//
//	header   "CKPACK" 0x01 0x00                                   8 bytes
//	object   0xB7 kind codec 0x00 rawLen:u32 storedLen:u32 id:32  44 bytes
//	         stored bytes                                          storedLen
//	...      more objects
//	table    per object: id:32 kind codec offset:u32 rawLen:u32 storedLen:u32
//	footer   count:u32 crc32c(table, count):u32 "CKPKEND" 0x01    16 bytes
//
// offset is that of the object's 44-byte header. Every object carries its own
// header, so a pack whose table is damaged can still be read front to back.
const (
	packMagic        = "CKPACK\x01\x00"
	packFooterMagic  = "CKPKEND\x01"
	objectMagic      = 0xB7
	packHeaderSize   = 8
	objectHeaderSize = 44
	tableEntrySize   = 46
	packFooterSize   = 16
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// PackEntry describes one object inside a pack.
type PackEntry struct {
	ID        ID
	Kind      Kind
	Codec     Codec
	Offset    uint32 // of the object header
	RawLen    uint32
	StoredLen uint32
}

// Valid checks what every decoder must: a known kind and codec, a size
// within MaxObjectSize, and stored bytes no more than the plain ones (the
// writer stores raw whenever zstd does not shrink an object), so a damaged
// entry can never make a reader allocate more than MaxObjectSize.
func (e PackEntry) Valid() bool {
	return e.Kind.Valid() && e.Codec <= CodecZstd && e.RawLen <= MaxObjectSize && e.StoredLen <= e.RawLen &&
		(e.Codec != CodecRaw || e.StoredLen == e.RawLen)
}

// end is the offset just past the entry's stored bytes.
func (e PackEntry) end() uint64 {
	return uint64(e.Offset) + objectHeaderSize + uint64(e.StoredLen)
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

// encodeTrailer returns the table and footer for entries.
func encodeTrailer(entries []PackEntry) []byte {
	b := make([]byte, 0, len(entries)*tableEntrySize+packFooterSize)
	for _, e := range entries {
		b = append(b, e.ID[:]...)
		b = append(b, byte(e.Kind), byte(e.Codec))
		b = binary.LittleEndian.AppendUint32(b, e.Offset)
		b = binary.LittleEndian.AppendUint32(b, e.RawLen)
		b = binary.LittleEndian.AppendUint32(b, e.StoredLen)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(entries)))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	return append(b, packFooterMagic...)
}

// DecodeTrailer parses the table at the end of a pack of packSize bytes
// whose last bytes are tail (the whole trailer, or more of the file before
// it). It checks the checksum and that every entry lies inside the pack, in
// order and without overlap.
func DecodeTrailer(tail []byte, packSize int64) ([]PackEntry, error) {
	if len(tail) < packFooterSize || int64(len(tail)) > packSize {
		return nil, fmt.Errorf("%w: too short for a footer", ErrBadPack)
	}
	footer := tail[len(tail)-packFooterSize:]
	if string(footer[8:]) != packFooterMagic {
		return nil, fmt.Errorf("%w: no footer", ErrBadPack)
	}
	count := binary.LittleEndian.Uint32(footer)
	tableLen := uint64(count) * tableEntrySize
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
	for i := range entries {
		b := table[i*tableEntrySize:]
		e := PackEntry{Kind: Kind(b[32]), Codec: Codec(b[33])}
		copy(e.ID[:], b[:32])
		e.Offset = binary.LittleEndian.Uint32(b[34:])
		e.RawLen = binary.LittleEndian.Uint32(b[38:])
		e.StoredLen = binary.LittleEndian.Uint32(b[42:])
		if !e.Valid() || uint64(e.Offset) < next || e.end() > dataEnd {
			return nil, fmt.Errorf("%w: table entry %d out of place", ErrBadPack, i)
		}
		next = e.end()
		entries[i] = e
	}
	return entries, nil
}

// ReadPackTable reads and checks the table of the pack in r of the given size.
func ReadPackTable(r io.ReaderAt, size int64) ([]PackEntry, error) {
	if size < packHeaderSize+packFooterSize {
		return nil, fmt.Errorf("%w: %d bytes is too short", ErrBadPack, size)
	}
	var head [packHeaderSize]byte
	if _, err := r.ReadAt(head[:], 0); err != nil {
		return nil, err
	}
	if string(head[:]) != packMagic {
		return nil, fmt.Errorf("%w: no pack header", ErrBadPack)
	}
	var footer [packFooterSize]byte
	if _, err := r.ReadAt(footer[:], size-packFooterSize); err != nil {
		return nil, err
	}
	count := int64(binary.LittleEndian.Uint32(footer[:]))
	tailLen := count*tableEntrySize + packFooterSize
	if tailLen > size-packHeaderSize {
		return nil, fmt.Errorf("%w: table of %d entries does not fit", ErrBadPack, count)
	}
	tail := make([]byte, tailLen)
	if _, err := r.ReadAt(tail, size-tailLen); err != nil {
		return nil, err
	}
	return DecodeTrailer(tail, size)
}

// readObject reads, checks and decodes the object e from the pack in r.
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
