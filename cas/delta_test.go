package cas

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
)

// edit returns b with a line changed in its middle and lines appended,
// as an agent edits a file.
func edit(b []byte, turn int) []byte {
	out := bytes.Clone(b[:len(b)/2])
	out = append(out, []byte("// edited in turn "+string(rune('0'+turn))+"\n")...)
	out = append(out, b[len(b)/2:]...)
	return append(out, []byte("// appended in turn "+string(rune('0'+turn))+"\n")...)
}

// deltaStore is a store whose first pack holds v1 of three files, and
// whose turns stored v2 and v3 of each, inline, with hints v3 -> v2 -> v1.
func deltaStore(t *testing.T) (*memIndex, *memPacks, [3][][]byte, [3][]ID, map[ID]ID) {
	t.Helper()
	db, dir := testDB(t)
	var versions [3][][]byte
	var ids [3][]ID
	hints := map[ID]ID{}
	for v := range 3 {
		for f := range 3 {
			if v == 0 {
				versions[v] = append(versions[v], textObject(10+f, 6000))
			} else {
				versions[v] = append(versions[v], edit(versions[v-1][f], v))
			}
		}
		if v == 0 {
			ids[v] = putAll(t, db, dir, versions[v])
		} else {
			ids[v], _ = putInline(t, db, dir, 64<<10, versions[v])
			for f := range 3 {
				hints[ids[v][f]] = ids[v-1][f]
			}
		}
	}
	return db, dir, versions, ids, hints
}

// TestFoldStoresDeltas: a fold given hints stores the new versions as
// deltas, every one against the whole version in the first pack (a base
// is never a delta), in a pack of version 3 that is far smaller than
// the whole versions; each reads back byte-exact; a base that is damaged
// makes its deltas ErrCorrupt, not wrong bytes.
func TestFoldStoresDeltas(t *testing.T) {
	db, dir, versions, ids, hints := deltaStore(t)
	ctx := context.Background()
	var asked []ID
	firstAsked := false // whether the fold says it copies a first-pack object
	_, err := FoldInline(ctx, db, dir, func(repacked func(ID) bool) (map[ID]ID, error) {
		firstAsked = slices.ContainsFunc(ids[0], repacked)
		for _, v := range ids[1:] {
			for _, id := range v {
				if repacked(id) {
					asked = append(asked, id)
				}
			}
		}
		return hints, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 6 || firstAsked {
		t.Fatalf("the fold said it copies %d of the 6 new versions, and first-pack objects %v", len(asked), firstAsked)
	}
	var size int64
	for v := 1; v < 3; v++ {
		for f, id := range ids[v] {
			l, err := db.Locate(id)
			if err != nil || !l.IsDelta() || l.Base != ids[0][f] {
				t.Fatalf("version %d of file %d: %+v, %v; want a delta of version 1", v+1, f, l, err)
			}
			p, _ := db.Pack(l.Pack)
			size = p.Size
		}
	}
	if size > 3000 {
		t.Fatalf("the fold's pack is %d bytes for 6 small edits", size)
	}
	for v := range 3 {
		checkGets(t, db, dir, ids[v], versions[v])
	}
	for name, b := range dir.packs {
		if string(b[:packHeaderSize]) == packMagicV3 {
			sp, err := salvageBytes(b, nil)
			if err != nil || sp.Damaged || len(sp.Entries) != 6 || !sp.Entries[0].IsDelta() {
				t.Fatalf("salvage of %s: %+v, %v", name, sp, err)
			}
		}
	}

	// Damage the first pack: the deltas read as corrupt.
	first, _ := db.Locate(ids[0][0])
	p, _ := db.Pack(first.Pack)
	pack := dir.packs[p.FileName()]
	for i := packHeaderSize + blockHeaderSize; i < len(pack)-200; i++ {
		pack[i] ^= 0x55
	}
	s := NewStore(dir, db)
	defer s.Close()
	if _, err := s.Get(ctx, ids[2][0]); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a delta of a damaged base: %v, want ErrCorrupt", err)
	}
}

// TestSweepKeepsBases: a sweep keeps every base of a live delta, though
// nothing else needs it, and copies a delta as it is stored when it
// rewrites its pack; once no delta needs it, the base goes.
func TestSweepKeepsBases(t *testing.T) {
	db, dir, versions, ids, hints := deltaStore(t)
	ctx := context.Background()
	if _, err := FoldInline(ctx, db, dir, func(func(ID) bool) (map[ID]ID, error) { return hints, nil }); err != nil {
		t.Fatal(err)
	}
	// Only the last versions are live, and every pack is rewritten.
	live := map[ID]bool{}
	for _, id := range ids[2] {
		live[id] = true
	}
	sw, err := PrepareSweep(ctx, db, dir, func(id ID) bool { return live[id] }, SweepOptions{RepackThreshold: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sw.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	checkGets(t, db, dir, ids[2], versions[2])
	for f, id := range ids[2] {
		if l, err := db.Locate(id); err != nil || l.Base != ids[0][f] {
			t.Fatalf("file %d after the sweep: %+v, %v", f, l, err)
		}
		if _, err := db.Locate(ids[0][f]); err != nil {
			t.Fatalf("the base of file %d is gone: %v", f, err)
		}
		if _, err := db.Locate(ids[1][f]); !errors.Is(err, ErrNotFound) {
			t.Fatalf("version 2 of file %d, dead, is still indexed: %v", f, err)
		}
	}
	// Nothing live: the bases go with their deltas.
	sw, err = PrepareSweep(ctx, db, dir, func(ID) bool { return false }, SweepOptions{RepackThreshold: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sw.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	if len(db.objects) != 0 || len(dir.packs) != 0 {
		t.Fatalf("%d objects and %d packs left", len(db.objects), len(dir.packs))
	}
}

// TestDeltaPlanNeverChainsDeltas: whatever the hints (a chain through
// objects the sweep copies, a cycle, a hint to an object of another kind
// or to a missing one), no object is made a delta of a delta or of
// itself, and what the plan names is live.
func TestDeltaPlanNeverChainsDeltas(t *testing.T) {
	a, b, c, d := Sum(KindChunk, []byte("a")), Sum(KindChunk, []byte("b")), Sum(KindChunk, []byte("c")), Sum(KindChunk, []byte("d"))
	tree, missing := Sum(KindTree, []byte("t")), Sum(KindChunk, []byte("missing"))
	db, _ := testDB(t)
	loc := func(id ID, kind Kind) Location {
		return Location{Pack: 1, PackEntry: PackEntry{ID: id, Kind: kind, RawLen: 10, BlockLen: 100, StoredLen: 50}}
	}
	db.objects[a] = loc(a, KindChunk)
	db.objects[tree] = loc(tree, KindTree)
	deltaOfA := loc(d, KindChunk)
	deltaOfA.Base, deltaOfA.DeltaLen = a, 5
	db.objects[d] = deltaOfA
	p := deltaPlan{
		hints:   map[ID]ID{c: b, b: a, d: c, a: d, tree: a},
		copying: map[ID]Location{b: loc(b, KindChunk), c: loc(c, KindChunk)},
		idx:     db,
		live:    func(id ID) bool { return id != missing },
		whole:   map[ID]bool{},
	}
	for _, tc := range []struct {
		id   ID
		kind Kind
		want ID // zero: none
	}{{c, KindChunk, a}, {b, KindChunk, a}, {tree, KindTree, ID{}}} {
		got, ok := p.base(tc.id, tc.kind)
		if id, want := tc.id, tc.want; want.IsZero() != !ok || (ok && got != want) {
			t.Errorf("base of %s: %s, %v; want %s", id.Short(), got.Short(), ok, want.Short())
		}
	}
	p.hints[c] = missing
	if _, ok := p.base(c, KindChunk); ok {
		t.Error("a missing base was named")
	}
	p.whole[b] = true
	if _, ok := p.base(b, KindChunk); ok {
		t.Error("the base of a live delta was made a delta")
	}
}

// TestNoDeltaUnderMinDeltaSize: the sweeps try no delta of an object
// under minDeltaSize bytes because none can be stored: even one encoded
// against itself is not deltaGain times smaller. One of that size can.
func TestNoDeltaUnderMinDeltaSize(t *testing.T) {
	var d deltaEncoder
	defer d.close()
	for _, tc := range []struct {
		size  int
		delta bool
	}{{minDeltaSize - 1, false}, {minDeltaSize, true}} {
		data := make([]byte, tc.size)
		for i := range data {
			data[i] = byte(i*7919>>3) ^ byte(i)
		}
		frame, err := d.encode(data, data)
		if err != nil {
			t.Fatal(err)
		}
		if (frame != nil) != tc.delta {
			t.Errorf("an object of %d bytes against itself: delta %v, want %v", tc.size, frame != nil, tc.delta)
		}
	}
}

// TestUndeltaAfterDamagedFrames: the pooled decoders of deltas decode
// each delta against its own base, exactly, whatever the one before
// decoded: a damaged frame (an error), a frame of another base, one cut
// short.
func TestUndeltaAfterDamagedFrames(t *testing.T) {
	var d deltaEncoder
	defer d.close()
	type delta struct{ data, base, frame []byte }
	var deltas []delta
	for i := range 4 {
		base := bytes.Repeat([]byte(fmt.Sprintf("func f%d() { return %d } // a line of file %d\n", i, i*i, i)), 40)
		data := append(bytes.Clone(base[:len(base)/2]), fmt.Sprintf("// edited %d\n", i)...)
		data = append(data, base[len(base)/2:]...)
		frame, err := d.encode(data, base)
		if err != nil || frame == nil {
			t.Fatalf("delta %d: %v (nil frame: %v)", i, err, frame == nil)
		}
		deltas = append(deltas, delta{data, base, frame})
	}
	decode := func(x delta, frame, base []byte) ([]byte, error) {
		return undelta(PackEntry{RawLen: uint32(len(x.data))}, frame, func(ID) ([]byte, error) { return base, nil })
	}
	for round := range 50 {
		x, other := deltas[round%4], deltas[(round+1)%4]
		damaged := bytes.Clone(x.frame)
		damaged[len(damaged)/2] ^= 0xff
		_, _ = decode(x, damaged, x.base)                  // an error, or bytes the ID check refuses
		_, _ = decode(x, x.frame[:len(x.frame)/2], x.base) // cut short
		_, _ = decode(x, x.frame, other.base)              // the wrong base
		got, err := decode(x, x.frame, x.base)
		if err != nil || !bytes.Equal(got, x.data) {
			t.Fatalf("round %d: the delta decodes to %d bytes (%v), want its %d", round, len(got), err, len(x.data))
		}
	}
}

// TestSweepCopiesDeltasByTheirBlocksChecksum: the blocks a fold or sweep
// writes carry zstd's checksum, and a later sweep copies the deltas in
// them without reading their bases (here the bases' pack cannot be
// opened); the deltas of a block without one (as an earlier casckpt
// wrote them) it checks against their bases, and it copies nothing when
// it cannot read them.
func TestSweepCopiesDeltasByTheirBlocksChecksum(t *testing.T) {
	for _, checksum := range []bool{true, false} {
		t.Run(fmt.Sprint("checksum ", checksum), func(t *testing.T) {
			if !checksum {
				old := sweepEncoder
				sweepEncoder = fullBlockEncoder(BulkLevel, bulkSlots, bulkTarget)
				t.Cleanup(func() { sweepEncoder = old })
			}
			db, dir, versions, ids, hints := deltaStore(t)
			ctx := context.Background()
			if _, err := FoldInline(ctx, db, dir, func(func(ID) bool) (map[ID]ID, error) { return hints, nil }); err != nil {
				t.Fatal(err)
			}
			l, err := db.Locate(ids[2][0])
			if err != nil || !l.IsDelta() {
				t.Fatalf("version 3 of file 1: %+v, %v; want a delta", l, err)
			}
			r, err := openPack(ctx, db, dir, mustPack(t, db, l.Pack))
			if err != nil {
				t.Fatal(err)
			}
			if got := storedBlockHasChecksum(r, l.PackEntry); got != checksum {
				t.Fatalf("the fold's block carries a checksum: %v, want %v", got, checksum)
			}
			r.Close()
			first, _ := db.Locate(ids[0][0])
			basePack := mustPack(t, db, first.Pack).FileName()
			opened := false
			dir.failOpen = func(name string) error {
				if name == basePack {
					opened = true
					return errors.New("unreadable")
				}
				return nil
			}
			live := map[ID]bool{}
			for _, id := range ids[2] {
				live[id] = true
			}
			sw, err := PrepareSweep(ctx, db, dir, func(id ID) bool { return live[id] }, SweepOptions{RepackThreshold: -1})
			if !checksum {
				if err == nil || !errors.Is(err, ErrCorrupt) {
					t.Fatalf("a sweep that cannot read the bases of deltas it copies: %v, want ErrCorrupt", err)
				}
				dir.failOpen = nil // (the caller's transaction undoes the index's deletions)
				checkGets(t, db, dir, ids[2], versions[2])
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sw.Finish(ctx); err != nil {
				t.Fatal(err)
			}
			if opened {
				t.Fatal("the sweep opened the bases' pack to copy deltas whose block carries a checksum")
			}
			dir.failOpen = nil
			checkGets(t, db, dir, ids[2], versions[2])
			for f, id := range ids[2] {
				if l, err := db.Locate(id); err != nil || !l.IsDelta() || l.Base != ids[0][f] {
					t.Fatalf("file %d after the sweep: %+v, %v; want a delta of version 1", f, l, err)
				}
			}
			// A byte of that block changed: the next sweep refuses to copy it.
			l, _ = db.Locate(ids[2][0])
			pack := dir.packs[mustPack(t, db, l.Pack).FileName()]
			pack[int(l.Offset)+blockHeaderSize+int(l.StoredLen)/2] ^= 0x01
			delete(live, ids[2][2])
			if _, err := PrepareSweep(ctx, db, dir, func(id ID) bool { return live[id] }, SweepOptions{RepackThreshold: -1}); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("a sweep of a damaged block: %v, want ErrCorrupt", err)
			}
		})
	}
}

// mustPack returns the record of pack n.
func mustPack(t *testing.T, db *memIndex, n uint32) PackInfo {
	t.Helper()
	p, err := db.Pack(n)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBlockChecked: a block sweepEncoder compressed carries a checksum
// that matches its plain bytes and no others; the other encoders' blocks
// carry none.
func TestBlockChecked(t *testing.T) {
	plain := textObject(3, 200<<10)
	for _, tc := range []struct {
		name string
		enc  *encoder
		want bool
	}{{"sweepEncoder", sweepEncoder, true}, {"blockEncoder", blockEncoder, false}, {"fastEncoder", fastEncoder, false}} {
		codec, stored, err := tc.enc.compress(plain, nil, nil)
		if err != nil || codec != CodecZstd {
			t.Fatalf("%s: codec %d, %v", tc.name, codec, err)
		}
		if got := blockChecked(codec, stored, plain); got != tc.want {
			t.Errorf("%s: checked %v, want %v", tc.name, got, tc.want)
		}
		other := bytes.Clone(plain)
		other[len(other)/3] ^= 1
		if blockChecked(codec, stored, other) {
			t.Errorf("%s: its checksum matches other plain bytes", tc.name)
		}
	}
}

// TestDeltaRoundTripsAtEverySize: a delta decodes to its object, from
// 4 KiB to MaxMemberSize, past zstd's 128 KiB blocks (whose
// frames the encoder's stream writes in more than one block), and its
// frame does not depend on the deltas the encoder made before it.
func TestDeltaRoundTripsAtEverySize(t *testing.T) {
	var d, fresh deltaEncoder
	defer d.close()
	for i, n := range []int{4 << 10, 64 << 10, 128<<10 - 100, 128<<10 + 100, MaxMemberSize - 100} {
		base := textObject(20+i, n)
		data := edit(base, i)[:n]
		frame, err := d.encode(data, base)
		if err != nil || frame == nil {
			t.Fatalf("%d bytes: no delta (%v)", n, err)
		}
		back, err := undelta(PackEntry{RawLen: uint32(n)}, frame, func(ID) ([]byte, error) { return base, nil })
		if err != nil || !bytes.Equal(back, data) {
			t.Fatalf("%d bytes: the delta decodes to %d bytes (%v)", n, len(back), err)
		}
		again, err := fresh.encode(data, base)
		fresh.close()
		fresh = deltaEncoder{}
		if err != nil || !bytes.Equal(again, frame) {
			t.Errorf("%d bytes: a new encoder's frame differs from one after %d other deltas (%v)", n, i, err)
		}
	}
}
