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
	// Entries are the objects whose bytes match their ID, in pack order.
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
// otherwise it walks the objects front to back by their headers, skipping
// damaged bytes until the next object that checks out. Either way every
// object is read and checked, so only sound objects are returned. A pack
// with nothing readable is an error wrapping ErrBadPack.
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
	r := bytes.NewReader(b)
	check := func(e PackEntry) (bool, error) {
		data, err := readObject(r, e)
		if err != nil {
			return false, nil
		}
		if fn != nil {
			if err := fn(e, data); err != nil {
				return false, err
			}
		}
		sp.Entries = append(sp.Entries, e)
		return true, nil
	}
	if table, err := ReadPackTable(r, sp.Size); err == nil {
		for _, e := range table {
			good, err := check(e)
			if err != nil {
				return sp, err
			}
			sp.Damaged = sp.Damaged || !good
		}
		return sp, nil
	}
	sp.Damaged = true
	off := 0
	if len(b) >= packHeaderSize && string(b[:packHeaderSize]) == packMagic {
		off = packHeaderSize
	}
	for off+objectHeaderSize <= len(b) {
		e, err := parseObjectHeader(b[off:])
		if err == nil && e.end()+uint64(off) <= uint64(len(b)) {
			e.Offset = uint32(off)
			good, err := check(e)
			if err != nil {
				return sp, err
			}
			if good {
				off = int(e.end())
				continue
			}
		}
		// Damaged here: look for the next object header.
		next := bytes.IndexByte(b[off+1:], objectMagic)
		if next < 0 {
			break
		}
		off += 1 + next
	}
	if len(sp.Entries) == 0 && len(b) > 0 {
		return sp, fmt.Errorf("%w: no object could be read", ErrBadPack)
	}
	return sp, nil
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
