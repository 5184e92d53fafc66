package cas

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
)

// SalvagedPack is what Salvage recovered from one pack.
type SalvagedPack struct {
	Name [16]byte // from the pack's name
	Size int64    // of the pack
	// Entries are the objects whose bytes match their ID, in pack order,
	// and the deltas whose headers are sound (see Salvage).
	Entries []PackEntry
	// Damaged is set when the table or an object could not be read: the
	// objects listed are then those that could.
	Damaged bool
}

// PackName parses a pack's name ("<32 hex digits>.pack").
func PackName(file string) ([16]byte, bool) {
	var name [16]byte
	hexName, ok := strings.CutSuffix(file, PackSuffix)
	if !ok || len(hexName) != 2*len(name) {
		return name, false
	}
	if _, err := hex.Decode(name[:], []byte(hexName)); err != nil || hex.EncodeToString(name[:]) != hexName {
		return name, false
	}
	return name, true
}

// Salvage reads pack name of packs whole and returns every object in it
// whose bytes match its ID, calling fn (when not nil) with each object's
// entry and plain bytes. It reads the pack's table when that is intact;
// otherwise it walks the objects and blocks front to back by their headers
// (and the members of each block by theirs), skipping damaged bytes until
// the next object or block that checks out. Either way every
// object is read and checked, so only sound objects are returned, but for
// deltas: their bytes need their bases, which may be in other packs, so a
// delta whose header is sound (and matches the table, when there is one)
// is returned unchecked, and fn is not called with it; Get checks it. A
// pack with nothing readable is an error wrapping ErrBadPack.
func Salvage(ctx context.Context, packs PackStore, name string, fn func(e PackEntry, data []byte) error) (SalvagedPack, error) {
	packName, ok := PackName(name)
	if !ok {
		return SalvagedPack{}, fmt.Errorf("%w: %s is not named as a pack", ErrBadPack, name)
	}
	b, err := readPack(ctx, packs, name)
	if err != nil {
		return SalvagedPack{}, err
	}
	sp, err := salvageBytes(b, fn)
	sp.Name = packName
	return sp, err
}

// readPack reads pack name whole.
func readPack(ctx context.Context, packs PackStore, name string) ([]byte, error) {
	r, err := packs.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b := make([]byte, r.Size())
	if _, err := io.ReadFull(io.NewSectionReader(r, 0, r.Size()), b); err != nil {
		return nil, fmt.Errorf("read pack %s: %w", name, err)
	}
	return b, nil
}

// salvageBytes is Salvage of a pack held in memory.
func salvageBytes(b []byte, fn func(e PackEntry, data []byte) error) (SalvagedPack, error) {
	sp := SalvagedPack{Size: int64(len(b))}
	keep := func(e PackEntry, data []byte) error {
		if fn != nil && !e.IsDelta() {
			if err := fn(e, data); err != nil {
				return err
			}
		}
		sp.Entries = append(sp.Entries, e)
		return nil
	}
	r := bytes.NewReader(b)
	if table, err := ReadPackTable(r, sp.Size); err == nil {
		good, err := salvageTable(r, table, keep)
		sp.Damaged = !good
		return sp, err
	}
	sp.Damaged = true
	off := 0
	if isPackHeader(b) {
		off = packHeaderSize
	}
	for off < len(b) {
		next, err := salvageRecord(b, off, keep)
		if err != nil {
			return sp, err
		}
		if next > off {
			off = next
			continue
		}
		// Damaged here: look for the next object or block header.
		off++
		for off < len(b) && b[off] != objectMagic && b[off] != blockMagic {
			off++
		}
	}
	if len(sp.Entries) == 0 && len(b) > 0 {
		return sp, fmt.Errorf("%w: no object could be read", ErrBadPack)
	}
	return sp, nil
}

// salvageTable reads every object the table lists, decoding each block
// once, and passes the sound ones to keep (a delta with no bytes: see
// Salvage). good is false when any is not.
func salvageTable(r io.ReaderAt, table []PackEntry, keep func(PackEntry, []byte) error) (good bool, _ error) {
	good = true
	var (
		block    []byte
		blockErr error
		blockAt  = int64(-1)
	)
	for _, e := range table {
		var data []byte
		var err error
		switch {
		case !e.InBlock():
			data, err = readObject(r, e)
		case int64(e.Offset) != blockAt:
			blockAt = int64(e.Offset)
			block, blockErr = readBlock(r, e)
			fallthrough
		default:
			err = blockErr
			if err == nil && e.IsDelta() {
				_, err = memberBytes(block, e)
			} else if err == nil {
				data, err = memberData(block, e, nil)
			}
		}
		if err != nil {
			good = false
			continue
		}
		if err := keep(e, data); err != nil {
			return false, err
		}
	}
	return good, nil
}

// salvageRecord reads the object or block whose header is at off and
// passes its sound objects to keep. It returns the offset past the record,
// or off when no record could be read there.
func salvageRecord(b []byte, off int, keep func(PackEntry, []byte) error) (int, error) {
	if b[off] == objectMagic {
		e, err := parseObjectHeader(b[off:])
		if err != nil || uint64(off)+e.end() > uint64(len(b)) {
			return off, nil
		}
		e.Offset = uint32(off)
		data, err := readObject(bytes.NewReader(b), e)
		if err != nil {
			return off, nil
		}
		return int(e.end()), keep(e, data)
	}
	h, err := parseBlockHeader(b[off:])
	if err != nil || uint64(off)+blockHeaderSize+uint64(h.StoredLen) > uint64(len(b)) {
		return off, nil
	}
	end := off + blockHeaderSize + int(h.StoredLen)
	plain, err := decompress(h.Codec, b[off+blockHeaderSize:end], h.BlockLen)
	if err != nil {
		return off, nil
	}
	inBlock := func(e PackEntry) PackEntry {
		e.Codec, e.Offset, e.StoredLen, e.BlockLen = h.Codec, uint32(off), h.StoredLen, h.BlockLen
		return e
	}
	err = walkMembers(plain, func(e PackEntry, data []byte) error {
		return keep(inBlock(e), data)
	}, func(e PackEntry) error {
		return keep(inBlock(e), nil)
	})
	return end, err
}

// AddPack records a salvaged pack and its objects in the object index of
// the caller's write transaction, to rebuild a lost index. Objects already
// indexed keep their first location.
func AddPack(idx IndexWriter, sp SalvagedPack) (PackInfo, error) {
	info, err := idx.AddPack(sp.Name, sp.Size)
	if err != nil {
		return PackInfo{}, err
	}
	for _, e := range sp.Entries {
		if err := idx.PutObject(Location{Pack: info.Number, PackEntry: e}, false); err != nil {
			return PackInfo{}, err
		}
	}
	return info, nil
}
