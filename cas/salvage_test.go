package cas

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

// onePack writes objects into a single pack and returns its store, name and
// IDs.
func onePack(t *testing.T, objects [][]byte) (*memPacks, string, []ID) {
	t.Helper()
	_, dir := testDB(t)
	w := NewWriter(dir, nil)
	var ids []ID
	for i, o := range objects {
		kind := KindChunk
		if i%3 == 2 {
			kind = KindRecord
		}
		id, err := w.Put(context.Background(), kind, o)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	packs, _ := dir.names()
	if len(packs) != 1 {
		t.Fatalf("%d packs", len(packs))
	}
	return dir, packs[0], ids
}

func salvageObjects(n int) [][]byte {
	var out [][]byte
	for i := range n {
		out = append(out, bytes.Repeat([]byte(fmt.Sprintf("object %d ", i)), 50+i*10))
	}
	return out
}

func TestSalvage(t *testing.T) {
	objects := salvageObjects(9)
	dir, path, ids := onePack(t, objects)
	pristine := dir.bytes(path)
	table, err := ReadPackTable(bytes.NewReader(pristine), int64(len(pristine)))
	if err != nil {
		t.Fatal(err)
	}
	got := func() (SalvagedPack, map[ID][]byte) {
		t.Helper()
		seen := map[ID][]byte{}
		sp, err := Salvage(context.Background(), dir, path, func(e PackEntry, data []byte) error {
			seen[e.ID] = data
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range sp.Entries {
			if Sum(e.Kind, seen[e.ID]) != e.ID {
				t.Fatalf("salvaged %s does not match its ID", e.ID.Short())
			}
		}
		return sp, seen
	}
	write := func(b []byte) { dir.set(path, b) }

	sp, seen := got()
	if sp.Damaged || len(sp.Entries) != len(objects) || sp.Size != int64(len(pristine)) {
		t.Fatalf("intact pack: damaged %v, %d entries", sp.Damaged, len(sp.Entries))
	}
	for i, id := range ids {
		if !bytes.Equal(seen[id], objects[i]) {
			t.Fatalf("object %d salvaged wrong", i)
		}
	}

	// A damaged table: every object is found by walking the headers.
	b := bytes.Clone(pristine)
	b[len(b)-packFooterSize-3] ^= 0xff
	write(b)
	if sp, _ := got(); !sp.Damaged || len(sp.Entries) != len(objects) {
		t.Fatalf("damaged table: damaged %v, %d of %d objects", sp.Damaged, len(sp.Entries), len(objects))
	}

	// A damaged object and a damaged table: all the others are found.
	b[table[4].Offset+objectHeaderSize+2] ^= 0xff
	write(b)
	if sp, seen := got(); len(sp.Entries) != len(objects)-1 || seen[ids[4]] != nil {
		t.Fatalf("damaged object 4: %d objects salvaged", len(sp.Entries))
	}

	// A damaged object under an intact table.
	b = bytes.Clone(pristine)
	b[table[2].Offset+10] ^= 0xff
	write(b)
	if sp, _ := got(); !sp.Damaged || len(sp.Entries) != len(objects)-1 {
		t.Fatalf("damaged object under a good table: %d objects", len(sp.Entries))
	}

	// Cut short: the objects before the cut.
	write(pristine[:table[6].Offset+5])
	if sp, _ := got(); len(sp.Entries) != 6 {
		t.Fatalf("cut pack: %d objects, want 6", len(sp.Entries))
	}

	// Garbage: an error, nothing salvaged.
	write(bytes.Repeat([]byte{0xB7, 1, 2}, 100))
	if sp, err := Salvage(context.Background(), dir, path, nil); !errors.Is(err, ErrBadPack) || len(sp.Entries) != 0 {
		t.Fatalf("garbage: %d objects, %v", len(sp.Entries), err)
	}
	if _, err := Salvage(context.Background(), dir, "x.pack", nil); err == nil {
		t.Fatal("a file not named as a pack was salvaged")
	}
	if _, err := Salvage(context.Background(), dir, PackInfo{}.FileName(), nil); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing pack: %v, want an error matching fs.ErrNotExist", err)
	}
}

func TestAddPackRebuildsTheIndex(t *testing.T) {
	objects := salvageObjects(5)
	dir, path, ids := onePack(t, objects)
	sp, err := Salvage(context.Background(), dir, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	db, _ := testDB(t)
	if err := within(db, func(tx *memIndex) error {
		_, err := AddPack(tx, sp)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	within(db, func(tx *memIndex) error {
		s := NewStore(dir, tx)
		defer s.Close()
		for i, id := range ids {
			got, err := s.Get(context.Background(), id)
			if err != nil || !bytes.Equal(got, objects[i]) {
				t.Fatalf("object %d after AddPack: %v", i, err)
			}
		}
		return nil
	})
}

func FuzzSalvage(f *testing.F) {
	data := []byte("hello hello hello hello hello hello hello hello hello hello hello")
	codec, stored, _ := compress(data)
	e := PackEntry{ID: Sum(KindChunk, data), Kind: KindChunk, Codec: codec, Offset: packHeaderSize, RawLen: uint32(len(data)), StoredLen: uint32(len(stored))}
	pack := append([]byte(packMagic), appendObjectHeader(nil, e)...)
	pack = append(pack, stored...)
	f.Add(append(pack, encodeTrailer([]PackEntry{e})...))
	f.Add(pack)
	f.Fuzz(func(t *testing.T, b []byte) {
		seen := map[ID]bool{}
		sp, _ := salvageBytes(b, func(e PackEntry, data []byte) error {
			if Sum(e.Kind, data) != e.ID {
				t.Fatal("salvaged bytes that do not match their ID")
			}
			seen[e.ID] = true
			return nil
		})
		for _, e := range sp.Entries {
			if !seen[e.ID] || e.end() > uint64(len(b)) {
				t.Fatalf("entry %+v was not checked or lies outside the pack", e)
			}
		}
	})
}
