package index

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/casckpt/casckpt/cas"
)

// The object index: "objects" maps an object ID to its location, "packs" a
// pack number to the pack's name and size (and whether it is inline),
// "inline" an inline pack's number to its bytes (made on first use; see
// inlinePiece).
var (
	bucketObjects = []byte("objects")
	bucketPacks   = []byte("packs")
	bucketInline  = []byte("inline")
)

// Objects is the transaction's object index, through which cas reads and
// writes object locations. Locate and Pack are safe for concurrent use (a
// scan's workers call them); the others belong to fn's goroutine.
func (t *Tx) Objects() cas.IndexWriter { return objectIndex{t} }

type objectIndex struct{ t *Tx }

var _ cas.IndexWriter = objectIndex{}

// An object's location is encoded in one of two layouts (big-endian):
//
//	v1, an object stored alone (18 bytes):
//	  pack:u32 offset:u32 rawLen:u32 storedLen:u32 kind codec
//	v2, a member of a block (27 bytes):
//	  0x02 pack:u32 offset:u32 rawLen:u32 storedLen:u32 blockLen:u32
//	  member:u32 kind codec
//	v3, a member stored as a delta (63 bytes, SchemaDeltas):
//	  0x03 pack:u32 offset:u32 rawLen:u32 storedLen:u32 blockLen:u32
//	  member:u32 deltaLen:u32 kind codec base:32
//
// told apart by their length. Objects stored alone keep the shorter v1,
// which every index written before blocks holds.
const (
	locationSize   = 18
	locationSizeV2 = 27
	locationV2     = 0x02
	locationSizeV3 = 63
	locationV3     = 0x03
)

func encodeLocation(l cas.Location) []byte {
	if !l.InBlock() {
		b := make([]byte, 0, locationSize)
		b = binary.BigEndian.AppendUint32(b, l.Pack)
		b = binary.BigEndian.AppendUint32(b, l.Offset)
		b = binary.BigEndian.AppendUint32(b, l.RawLen)
		b = binary.BigEndian.AppendUint32(b, l.StoredLen)
		return append(b, byte(l.Kind), byte(l.Codec))
	}
	b := append(make([]byte, 0, locationSizeV3), locationV2)
	if l.IsDelta() {
		b[0] = locationV3
	}
	for _, v := range memberFields(&l, b[0]) {
		b = binary.BigEndian.AppendUint32(b, *v)
	}
	b = append(b, byte(l.Kind), byte(l.Codec))
	if l.IsDelta() {
		b = append(b, l.Base[:]...)
	}
	return b
}

// memberFields are the fields of a member's location that layout (v2
// or v3) holds as u32s, in their order.
func memberFields(l *cas.Location, layout byte) []*uint32 {
	fields := []*uint32{&l.Pack, &l.Offset, &l.RawLen, &l.StoredLen, &l.BlockLen, &l.Member}
	if layout == locationV3 {
		fields = append(fields, &l.DeltaLen)
	}
	return fields
}

// decodeLocation decodes the index entry of object id, of any layout.
func decodeLocation(id cas.ID, b []byte) (cas.Location, error) {
	var l cas.Location
	switch {
	case len(b) == locationSize:
		l.Pack = binary.BigEndian.Uint32(b)
		l.Offset = binary.BigEndian.Uint32(b[4:])
		l.RawLen = binary.BigEndian.Uint32(b[8:])
		l.StoredLen = binary.BigEndian.Uint32(b[12:])
		l.Kind, l.Codec = cas.Kind(b[16]), cas.Codec(b[17])
	case len(b) == locationSizeV2 && b[0] == locationV2, len(b) == locationSizeV3 && b[0] == locationV3:
		fields := memberFields(&l, b[0])
		for i, f := range fields {
			*f = binary.BigEndian.Uint32(b[1+4*i:])
		}
		k := 1 + 4*len(fields)
		l.Kind, l.Codec = cas.Kind(b[k]), cas.Codec(b[k+1])
		copy(l.Base[:], b[k+2:]) // v3 only
		if !l.InBlock() {
			return cas.Location{}, fmt.Errorf("%w: index entry of %s is a member of no block", cas.ErrCorrupt, id.Short())
		}
		if b[0] == locationV3 && !l.IsDelta() {
			return cas.Location{}, fmt.Errorf("%w: index entry of %s is a delta of no base", cas.ErrCorrupt, id.Short())
		}
	default:
		return cas.Location{}, fmt.Errorf("%w: index entry of %s is %d bytes", cas.ErrCorrupt, id.Short(), len(b))
	}
	l.ID = id
	if !l.Valid() {
		return cas.Location{}, fmt.Errorf("%w: index entry of %s is malformed", cas.ErrCorrupt, id.Short())
	}
	return l, nil
}

// A pack record is name:16 size:u64, followed for an inline pack by one
// byte, packInline (SchemaInline).
const (
	packInfoSize = 24
	packInline   = 0x01
)

func encodePackInfo(p cas.PackInfo) []byte {
	b := append(make([]byte, 0, packInfoSize+1), p.Name[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(p.Size))
	if p.Inline {
		b = append(b, packInline)
	}
	return b
}

func packKey(n uint32) []byte { return binary.BigEndian.AppendUint32(nil, n) }

// decodePackInfo decodes a packs-bucket record.
func decodePackInfo(key, value []byte) (cas.PackInfo, error) {
	inline := len(value) == packInfoSize+1 && value[packInfoSize] == packInline
	if len(key) != 4 || (len(value) != packInfoSize && !inline) {
		return cas.PackInfo{}, fmt.Errorf("%w: malformed pack record", cas.ErrCorrupt)
	}
	p := cas.PackInfo{Number: binary.BigEndian.Uint32(key), Inline: inline}
	copy(p.Name[:], value)
	p.Size = int64(binary.BigEndian.Uint64(value[16:]))
	return p, nil
}

func (o objectIndex) Locate(id cas.ID) (l cas.Location, err error) {
	err = guard(func() error {
		o.t.mu.Lock()
		defer o.t.mu.Unlock()
		v := o.t.get(bucketObjects, id[:])
		if v == nil {
			return fmt.Errorf("%s: %w", id.Short(), cas.ErrNotFound)
		}
		l, err = decodeLocation(id, v)
		return err
	})
	return l, err
}

func (o objectIndex) Pack(n uint32) (p cas.PackInfo, err error) {
	err = guard(func() error {
		o.t.mu.Lock()
		defer o.t.mu.Unlock()
		v := o.t.get(bucketPacks, packKey(n))
		if v == nil {
			return fmt.Errorf("%w: pack %d is not in the index", cas.ErrCorrupt, n)
		}
		p, err = decodePackInfo(packKey(n), v)
		return err
	})
	return p, err
}

// InlinePack returns a copy of inline pack n's bytes (bbolt's stay valid
// only while the transaction is open).
func (o objectIndex) InlinePack(n uint32) (data []byte, err error) {
	err = guard(func() error {
		o.t.mu.Lock()
		defer o.t.mu.Unlock()
		var found bool
		if data, found = readInline(o.t.bucket(bucketInline), n); !found {
			return fmt.Errorf("%w: inline pack %d is not in the index", cas.ErrCorrupt, n)
		}
		return nil
	})
	return data, err
}

func (o objectIndex) Packs() ([]cas.PackInfo, error) {
	var packs []cas.PackInfo
	b := o.t.bucket(bucketPacks)
	if b == nil {
		return nil, nil
	}
	err := b.ForEach(func(k, v []byte) error {
		p, err := decodePackInfo(k, v)
		if err != nil {
			return err
		}
		packs = append(packs, p)
		return nil
	})
	return packs, err
}

func (o objectIndex) ForEachObject(fn func(cas.Location) error) error {
	b := o.t.bucket(bucketObjects)
	if b == nil {
		return nil
	}
	return b.ForEach(func(k, v []byte) error {
		if len(k) != cas.IDSize {
			return fmt.Errorf("%w: malformed object key", cas.ErrCorrupt)
		}
		l, err := decodeLocation(cas.ID(k), v)
		if err != nil {
			return err
		}
		return fn(l)
	})
}

func (o objectIndex) AddPack(name [16]byte, size int64) (cas.PackInfo, error) {
	info, err := o.putPack(cas.PackInfo{Name: name, Size: size})
	if err == nil {
		o.t.added = append(o.t.added, info)
	}
	return info, err
}

// AddInlinePack records inline pack name and stores its bytes, in pieces,
// raising the database's schema to SchemaInlinePieces first: an older
// casckpt would take the pack for a missing file, or its pieces for a
// missing pack.
func (o objectIndex) AddInlinePack(name [16]byte, data []byte) (cas.PackInfo, error) {
	if err := o.t.RequireSchema(SchemaInlinePieces); err != nil {
		return cas.PackInfo{}, err
	}
	inline, err := o.t.tx.CreateBucketIfNotExists(bucketInline)
	if err != nil {
		return cas.PackInfo{}, err
	}
	info, err := o.putPack(cas.PackInfo{Name: name, Size: int64(len(data)), Inline: true})
	if err != nil {
		return cas.PackInfo{}, err
	}
	return info, putInline(inline, info.Number, data)
}

// putPack numbers pack p anew and records it.
func (o objectIndex) putPack(p cas.PackInfo) (cas.PackInfo, error) {
	packs := o.t.tx.Bucket(bucketPacks)
	seq, err := packs.NextSequence()
	if err != nil {
		return cas.PackInfo{}, err
	}
	if seq > 1<<32-1 {
		return cas.PackInfo{}, errors.New("index: pack numbers exhausted")
	}
	p.Number = uint32(seq)
	return p, packs.Put(packKey(p.Number), encodePackInfo(p))
}

func (o objectIndex) PutObject(l cas.Location, replace bool) error {
	objects := o.t.tx.Bucket(bucketObjects)
	if !replace && objects.Get(l.ID[:]) != nil {
		return nil
	}
	if l.IsDelta() {
		if err := o.t.RequireSchema(SchemaDeltas); err != nil {
			return err
		}
	}
	return objects.Put(l.ID[:], encodeLocation(l))
}

func (o objectIndex) DeleteObject(id cas.ID) error {
	return o.t.tx.Bucket(bucketObjects).Delete(id[:])
}

func (o objectIndex) DeletePack(n uint32) error {
	if inline := o.t.tx.Bucket(bucketInline); inline != nil {
		if err := deleteInline(inline, n); err != nil {
			return err
		}
	}
	return o.t.tx.Bucket(bucketPacks).Delete(packKey(n))
}

// PackBytes is the total size of the packs in the index: the store's data
// size, known without listing the packs.
func (t *Tx) PackBytes() (int64, error) {
	packs, err := objectIndex{t}.Packs()
	var total int64
	for _, p := range packs {
		total += p.Size
	}
	return total, err
}

// InlineBytes counts the inline packs (cas.PackInfo.Inline) in the index
// and their bytes: what a fold would move into a pack file.
func (t *Tx) InlineBytes() (n int, size int64) {
	b := t.bucket(bucketInline)
	if b == nil {
		return 0, 0
	}
	return countInline(b)
}
