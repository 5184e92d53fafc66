package cas

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
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

// salvageObjects returns n small objects (members of blocks) and, when
// large is set, two objects stored alone.
func salvageObjects(n int, large bool) [][]byte {
	var out [][]byte
	for i := range n {
		out = append(out, bytes.Repeat([]byte(fmt.Sprintf("object %d ", i)), 50+i*10))
	}
	if large {
		for i := range 2 {
			out = append(out, bytes.Repeat([]byte(fmt.Sprintf("large object %d ", i)), MaxMemberSize/10))
		}
	}
	return out
}

// salvaged runs Salvage on pack path and checks every object it returns
// against its ID.
func salvaged(t *testing.T, dir *memPacks, path string) (SalvagedPack, map[ID][]byte) {
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

// TestSalvage: onePack's pack holds two objects stored alone, then a
// block of chunks and one of records.
func TestSalvage(t *testing.T) {
	objects := salvageObjects(9, true)
	dir, path, ids := onePack(t, objects)
	pristine := dir.bytes(path)
	table, err := ReadPackTable(bytes.NewReader(pristine), int64(len(pristine)))
	if err != nil {
		t.Fatal(err)
	}
	if table[0].InBlock() || table[1].InBlock() || !table[2].InBlock() || table[2].Offset == table[len(table)-1].Offset {
		t.Fatalf("want two objects stored alone, then two blocks: %+v", table)
	}
	write := func(b []byte) { dir.set(path, b) }

	sp, seen := salvaged(t, dir, path)
	if sp.Damaged || len(sp.Entries) != len(objects) || sp.Size != int64(len(pristine)) {
		t.Fatalf("intact pack: damaged %v, %d entries", sp.Damaged, len(sp.Entries))
	}
	for i, id := range ids {
		if !bytes.Equal(seen[id], objects[i]) {
			t.Fatalf("object %d salvaged wrong", i)
		}
	}

	// A destroyed table: every object and member is found, with its bytes,
	// by walking the headers, at the place the table gave.
	b := bytes.Clone(pristine)
	clear(b[table[len(table)-1].end():])
	write(b)
	sp, seen = salvaged(t, dir, path)
	if !sp.Damaged || !slices.Equal(sortedEntries(sp.Entries), sortedEntries(table)) {
		t.Fatalf("destroyed table: damaged %v, %d of %d objects, or not where the table said", sp.Damaged, len(sp.Entries), len(objects))
	}
	for i, id := range ids {
		if !bytes.Equal(seen[id], objects[i]) {
			t.Fatalf("object %d salvaged wrong without the table", i)
		}
	}

	// A damaged object stored alone and a damaged table: all the others.
	b[table[0].Offset+objectHeaderSize+2] ^= 0xff
	write(b)
	if sp, seen := salvaged(t, dir, path); len(sp.Entries) != len(objects)-1 || seen[ids[9]] != nil {
		t.Fatalf("damaged object 9: %d objects salvaged", len(sp.Entries))
	}

	// A damaged block under an intact table: the other block's members and
	// the objects stored alone are found.
	b = bytes.Clone(pristine)
	b[table[2].Offset+blockHeaderSize+5] ^= 0xff
	write(b)
	if sp, seen := salvaged(t, dir, path); !sp.Damaged || seen[ids[2]] == nil || seen[ids[9]] == nil || seen[ids[10]] == nil {
		t.Fatalf("damaged chunk block under a good table: %d objects", len(sp.Entries))
	}

	// Cut short inside the block of records: the objects before it.
	last := table[len(table)-1]
	write(pristine[:last.Offset+5])
	if sp, _ := salvaged(t, dir, path); len(sp.Entries) != len(objects)-3 {
		t.Fatalf("cut pack: %d objects, want %d", len(sp.Entries), len(objects)-3)
	}

	// Garbage: an error, nothing salvaged.
	write(bytes.Repeat([]byte{0xB7, 1, 2, 0xB9}, 100))
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

// sortedEntries returns entries ordered by ID.
func sortedEntries(entries []PackEntry) []PackEntry {
	return slices.SortedFunc(slices.Values(entries), func(a, b PackEntry) int { return bytes.Compare(a.ID[:], b.ID[:]) })
}

func TestAddPackRebuildsTheIndex(t *testing.T) {
	objects := salvageObjects(5, true)
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
	f.Add(append(bytes.Clone(pack), encodeTrailer([]PackEntry{e}, false)...))
	f.Add(bytes.Clone(pack))
	plain := appendMemberHeader(nil, KindTree, Sum(KindTree, data), len(data))
	plain = append(plain, data...)
	bcodec, bstored, _ := compressBlock(NewWriter(nil, nil).encoderFor(len(plain)), plain, nil)
	m := PackEntry{ID: Sum(KindTree, data), Kind: KindTree, Codec: bcodec, Offset: uint32(len(pack)), RawLen: uint32(len(data)), StoredLen: uint32(len(bstored)), BlockLen: uint32(len(plain))}
	pack = append(pack, appendBlockHeader(nil, bcodec, m.StoredLen, m.BlockLen)...)
	pack = append(pack, bstored...)
	f.Add(append(bytes.Clone(pack), encodeTrailer([]PackEntry{e, m}, false)...))
	f.Add(bytes.Clone(pack))
	// A block holding a delta, in a pack of version 3.
	base, newer := textObject(7, 4000), edit(textObject(7, 4000), 1)
	var enc deltaEncoder
	defer enc.close()
	frame, err := enc.encode(newer, base)
	if err != nil || frame == nil {
		f.Fatalf("no delta for the seed: %v", err)
	}
	dplain := appendDeltaHeader(nil, KindChunk, Sum(KindChunk, newer), len(newer), Sum(KindChunk, base), len(frame))
	dplain = append(dplain, frame...)
	d := PackEntry{ID: Sum(KindChunk, newer), Kind: KindChunk, Codec: CodecRaw, Offset: uint32(len(pack)), RawLen: uint32(len(newer)),
		StoredLen: uint32(len(dplain)), BlockLen: uint32(len(dplain)), Base: Sum(KindChunk, base), DeltaLen: uint32(len(frame))}
	pack = append(pack, appendBlockHeader(nil, CodecRaw, d.StoredLen, d.BlockLen)...)
	pack = append(pack, dplain...)
	f.Add(append(bytes.Clone(pack), encodeTrailer([]PackEntry{e, m, d}, true)...))
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
			if (!seen[e.ID] && !e.IsDelta()) || e.end() > uint64(len(b)) || !e.Valid() {
				t.Fatalf("entry %+v was not checked or lies outside the pack", e)
			}
		}
	})
}
