package cas

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// textObject returns a compressible object of about n bytes, different for
// each seed, as source files are.
func textObject(seed, n int) []byte {
	rng := rand.New(rand.NewPCG(uint64(seed), 9))
	words := []string{"func", "return", "err", "if", "nil", "for", "range", "byte", "int", "ctx", "{", "}", "\n\t"}
	var b []byte
	for len(b) < n {
		b = append(b, words[rng.IntN(len(words))]...)
		b = append(b, ' ')
	}
	return b
}

func randomObject(seed, n int) []byte {
	rng := rand.New(rand.NewPCG(uint64(seed), 10))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

type testObject struct {
	kind Kind
	data []byte
}

// mixedObjects returns chunks filling more than one block, some
// incompressible, trees, records, an empty chunk and objects stored alone.
func mixedObjects() []testObject {
	var out []testObject
	for i := range 1200 {
		out = append(out, testObject{KindChunk, textObject(i, 3000+i*2)})
	}
	for i := range 5 {
		out = append(out, testObject{KindChunk, randomObject(i, 2000)})
	}
	for i := range 30 {
		out = append(out, testObject{KindTree, textObject(1000+i, 300)})
	}
	out = append(out, testObject{KindRecord, []byte("record one")}, testObject{KindRecord, []byte("record two")})
	out = append(out, testObject{KindChunk, nil}, testObject{KindChunk, textObject(2000, MaxMemberSize+1)})
	return append(out, testObject{KindTree, textObject(2001, 2*MaxMemberSize)})
}

// putObjects stores objects from four goroutines at once and commits them.
func putObjects(t *testing.T, db *memIndex, dir *memPacks, objects []testObject) []ID {
	t.Helper()
	ctx := context.Background()
	w := NewWriter(dir, NewStore(dir, db))
	ids := make([]ID, len(objects))
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < len(objects); i += 4 {
				id, err := w.Put(ctx, objects[i].kind, objects[i].data)
				if err != nil {
					errs <- err
					return
				}
				ids[i] = id
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(ctx, db, false); err != nil {
		t.Fatal(err)
	}
	return ids
}

// packTables returns the tables of every pack in dir.
func packTables(t *testing.T, dir *memPacks) []PackEntry {
	t.Helper()
	var all []PackEntry
	eachPack(t, dir, func(_ []byte, table []PackEntry) { all = append(all, table...) })
	return all
}

// eachPack calls fn with the bytes and the table of every pack in dir.
func eachPack(t *testing.T, dir *memPacks, fn func(b []byte, table []PackEntry)) {
	t.Helper()
	names, _ := dir.names()
	for _, name := range names {
		b := dir.bytes(name)
		table, err := ReadPackTable(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		fn(b, table)
	}
}

func TestMixedObjectsRoundTrip(t *testing.T) {
	db, dir := testDB(t)
	objects := mixedObjects()
	ids := putObjects(t, db, dir, objects)

	blocks := map[[2]uint32]Kind{} // first kind seen in each block
	for _, e := range packTables(t, dir) {
		if e.InBlock() != (e.RawLen <= MaxMemberSize) {
			t.Fatalf("object of %d bytes: in a block %v", e.RawLen, e.InBlock())
		}
		if !e.InBlock() {
			continue
		}
		key := [2]uint32{e.Offset, e.StoredLen}
		if k, ok := blocks[key]; ok && (k == KindChunk) != (e.Kind == KindChunk) {
			t.Fatal("a block mixes chunks with trees or records")
		}
		blocks[key] = e.Kind
	}
	if len(blocks) < 3 {
		t.Fatalf("%d blocks, want at least two of chunks and one of trees", len(blocks))
	}

	// Many readers at once, each in its own order, through one Store.
	s := NewStore(dir, db)
	defer s.Close()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			order := rand.New(rand.NewPCG(uint64(g), 1)).Perm(len(ids))
			for _, i := range order {
				got, err := s.Get(context.Background(), ids[i])
				if err != nil || !bytes.Equal(got, objects[i].data) {
					t.Errorf("object %d: %v", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	// What Get returns is the caller's to change.
	got, _ := s.Get(context.Background(), ids[0])
	got[0] ^= 0xff
	if again, err := s.Get(context.Background(), ids[0]); err != nil || !bytes.Equal(again, objects[0].data) {
		t.Fatalf("a change to a returned object reached the cache: %v", err)
	}
}

// TestCorruptBytesInABlock: a damaged byte inside a block is reported as
// ErrCorrupt for the members it damages, never as wrong bytes or a panic.
func TestCorruptBytesInABlock(t *testing.T) {
	ctx := context.Background()
	check := func(t *testing.T, objects [][]byte, flip func(b []byte, table []PackEntry) int, wantBad func(i int) bool) {
		t.Helper()
		db, dir := testDB(t)
		ids := putAll(t, db, dir, objects)
		names, _ := dir.names()
		pristine := dir.bytes(names[0])
		table := packTables(t, dir)
		unnoticed := 0
		n := 0
		for ; ; n++ {
			b := bytes.Clone(pristine)
			at := flip(b, table)
			if at < 0 {
				break
			}
			b[at] ^= 1 << (n % 8)
			dir.set(names[0], b)
			s := NewStore(dir, db)
			bad := 0
			for i, id := range ids {
				got, err := s.Get(ctx, id)
				switch {
				case err != nil && !errors.Is(err, ErrCorrupt):
					t.Fatalf("byte %d: object %d: %v, want ErrCorrupt", at, i, err)
				case err == nil && !bytes.Equal(got, objects[i]):
					t.Fatalf("byte %d: object %d: wrong bytes returned", at, i)
				case err != nil:
					bad++
					if wantBad != nil && !wantBad(i) {
						t.Fatalf("byte %d: object %d reported corrupt", at, i)
					}
				case wantBad != nil && wantBad(i):
					t.Fatalf("byte %d: object %d not reported corrupt", at, i)
				}
			}
			if bad == 0 {
				unnoticed++ // the bit was padding: every member reads right
			}
			s.Close()
		}
		if unnoticed > n/10 {
			t.Fatalf("%d of %d changed bytes left every member readable", unnoticed, n)
		}
	}
	t.Run("zstd", func(t *testing.T) {
		var objects [][]byte
		for i := range 10 {
			objects = append(objects, textObject(i, 500))
		}
		n := -1
		check(t, objects, func(b []byte, table []PackEntry) int {
			block := table[0]
			if n++; uint64(n) >= blockHeaderSize+uint64(block.StoredLen) {
				return -1
			}
			return int(block.Offset) + n // every byte of the header and frame
		}, nil)
	})
	t.Run("raw", func(t *testing.T) {
		var objects [][]byte
		for i := range 10 {
			objects = append(objects, randomObject(i, 500))
		}
		n := 0
		three := Sum(KindChunk, objects[3])
		check(t, objects, func(b []byte, table []PackEntry) int {
			i := slices.IndexFunc(table, func(e PackEntry) bool { return e.ID == three })
			if table[i].Codec != CodecRaw {
				t.Fatal("random members stored compressed")
			}
			if n++; n > 8 {
				return -1
			}
			// a byte of member 3's data: only member 3 is damaged
			return int(table[i].Offset) + blockHeaderSize + int(table[i].Member) + memberHeaderSize + n*50
		}, func(i int) bool { return i == 3 })
	})
}

func TestV1PackStillReads(t *testing.T) {
	fixture, err := os.ReadFile(filepath.Join("testdata", "v1pack", "fixture.pack"))
	if err != nil {
		t.Fatal(err)
	}
	objects := v1FixtureObjects()
	_, dir := testDB(t)
	name := PackInfo{Name: [16]byte{1}}.FileName()
	dir.set(name, fixture)
	table, err := ReadPackTable(bytes.NewReader(fixture), int64(len(fixture)))
	if err != nil || len(table) != len(objects) {
		t.Fatalf("v1 table: %d entries, %v", len(table), err)
	}
	for _, e := range table {
		if e.InBlock() {
			t.Fatal("a v1 entry reads as a member of a block")
		}
	}
	db := newMemIndex()
	sp, err := Salvage(context.Background(), dir, name, nil)
	if err != nil || sp.Damaged {
		t.Fatalf("salvage of a v1 pack: damaged %v, %v", sp.Damaged, err)
	}
	if _, err := AddPack(db, sp); err != nil {
		t.Fatal(err)
	}
	readAll := func(t *testing.T, dead int) {
		t.Helper()
		s := NewStore(dir, db)
		defer s.Close()
		for i, o := range objects {
			got, err := s.Get(context.Background(), Sum(v1FixtureKind(i), o))
			if i == dead {
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("dead object %d: %v", i, err)
				}
				continue
			}
			if err != nil || !bytes.Equal(got, o) {
				t.Fatalf("object %d of the v1 pack: %v", i, err)
			}
		}
	}
	readAll(t, -1)

	// Its table destroyed, it is still salvaged whole.
	broken := bytes.Clone(fixture)
	clear(broken[table[len(table)-1].end():])
	dir.set(name, broken)
	if sp, err := Salvage(context.Background(), dir, name, nil); err != nil || len(sp.Entries) != len(objects) {
		t.Fatalf("v1 pack without its table: %d objects, %v", len(sp.Entries), err)
	}
	dir.set(name, fixture)

	// Repacked, its small objects become members of blocks.
	dead := Sum(v1FixtureKind(0), objects[0])
	if sw := sweep(t, db, dir, func(id ID) bool { return id != dead }, SweepOptions{RepackThreshold: -1}); sw.PacksRewritten != 1 {
		t.Fatalf("%d packs rewritten, want the v1 pack", sw.PacksRewritten)
	}
	readAll(t, 0)
	for _, e := range packTables(t, dir) {
		if e.InBlock() != (e.RawLen <= MaxMemberSize) {
			t.Fatalf("repacked object of %d bytes: in a block %v", e.RawLen, e.InBlock())
		}
	}
}

// sweep runs a whole collection: prepare, commit (the memory index has no
// transactions), finish.
func sweep(t *testing.T, db *memIndex, dir *memPacks, live func(ID) bool, opts SweepOptions) *Sweep {
	t.Helper()
	sw, err := PrepareSweep(context.Background(), db, dir, live, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sw.Finish(context.Background()); err != nil {
		t.Fatal(err)
	}
	return sw
}

// v1FixtureObjects are the objects of testdata/v1pack/fixture.pack, written
// by the Writer of pack version 1 in this order, of kind v1FixtureKind.
func v1FixtureObjects() [][]byte {
	rng := rand.New(rand.NewPCG(7, 8))
	random := make([]byte, 100_000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	out := [][]byte{[]byte("tiny"), random, bytes.Repeat([]byte("large compressible object "), 20_000)}
	for i := range 6 {
		out = append(out, bytes.Repeat([]byte(fmt.Sprintf("small object %d ", i)), 40+i))
	}
	return out
}

func v1FixtureKind(i int) Kind {
	if i%4 == 3 {
		return KindTree
	}
	return KindChunk
}

// TestRepackOfAHalfDeadBlock: a sweep copies exactly the live members of a
// block into a new one; a block with too few dead members is left alone.
func TestRepackOfAHalfDeadBlock(t *testing.T) {
	db, dir := testDB(t)
	var objects [][]byte
	for i := range 20 {
		objects = append(objects, textObject(i, 2000))
	}
	ids := putAll(t, db, dir, objects)
	live := map[ID]bool{}
	for _, id := range ids[1:] {
		live[id] = true
	}
	sw := sweep(t, db, dir, func(id ID) bool { return live[id] }, SweepOptions{})
	if sw.ObjectsDeleted != 1 || sw.PacksRewritten != 0 {
		t.Fatalf("one of 20 members dead: %d deleted, %d packs rewritten; want the block left alone", sw.ObjectsDeleted, sw.PacksRewritten)
	}
	for i, id := range ids {
		if i%2 == 0 {
			delete(live, id)
		}
	}
	sw = sweep(t, db, dir, func(id ID) bool { return live[id] }, SweepOptions{})
	if sw.PacksRewritten != 1 {
		t.Fatalf("half the block dead: %d packs rewritten, want 1", sw.PacksRewritten)
	}
	var stored []ID
	for _, e := range packTables(t, dir) {
		if !e.InBlock() {
			t.Fatal("a repacked member is stored alone")
		}
		stored = append(stored, e.ID)
	}
	var want []ID
	for id := range live {
		want = append(want, id)
	}
	byID := func(a, b ID) int { return bytes.Compare(a[:], b[:]) }
	slices.SortFunc(stored, byID)
	slices.SortFunc(want, byID)
	if !slices.Equal(stored, want) {
		t.Fatalf("the packs hold %d objects, want exactly the %d live ones", len(stored), len(want))
	}
	s := NewStore(dir, db)
	defer s.Close()
	for i, id := range ids {
		got, err := s.Get(context.Background(), id)
		if live[id] != (err == nil) || (err == nil && !bytes.Equal(got, objects[i])) {
			t.Fatalf("object %d (live %v) after the repack: %v", i, live[id], err)
		}
	}
}

// FuzzReadBlock decodes a block record and its members as Get and Salvage
// do: what they return must match its ID, deltas (against fuzzBase)
// included.
func FuzzReadBlock(f *testing.F) {
	var plain []byte
	for i, o := range [][]byte{[]byte("one member"), textObject(1, 300), nil} {
		plain = appendMemberHeader(plain, Kind(1+i%3), Sum(Kind(1+i%3), o), len(o))
		plain = append(plain, o...)
	}
	edited := append(bytes.Clone(fuzzBase), "// edited\n"...)
	var enc deltaEncoder
	defer enc.close()
	frame, err := enc.encode(edited, fuzzBase)
	if err != nil || frame == nil {
		f.Fatalf("no delta of the seed: %v", err)
	}
	plain = appendDeltaHeader(plain, KindChunk, Sum(KindChunk, edited), len(edited), Sum(KindChunk, fuzzBase), len(frame))
	plain = append(plain, frame...)
	for _, compressed := range []bool{true, false} {
		codec, stored := CodecRaw, plain
		if compressed {
			codec, stored, _ = compressBlock(NewWriter(nil, nil).encoderFor(len(plain)), plain, nil)
		}
		f.Add(append(appendBlockHeader(nil, codec, uint32(len(stored)), uint32(len(plain))), stored...), uint32(0))
		f.Add(append(appendBlockHeader(nil, codec, uint32(len(stored)), uint32(len(plain))), stored...), uint32(48))
	}
	f.Fuzz(func(t *testing.T, b []byte, member uint32) {
		h, err := parseBlockHeader(b)
		if err != nil {
			return
		}
		e := h
		e.Member = member
		block, err := readBlock(bytes.NewReader(b), e)
		if err != nil {
			return
		}
		base := func(ID) ([]byte, error) { return fuzzBase, nil }
		walkMembers(block, func(m PackEntry, data []byte) error {
			m.Codec, m.StoredLen, m.BlockLen = h.Codec, h.StoredLen, h.BlockLen
			if !m.Valid() || Sum(m.Kind, data) != m.ID {
				t.Fatalf("a member walked is not valid or not sound: %+v", m)
			}
			if got, err := memberData(block, m, nil); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("memberData of a sound member: %v", err)
			}
			return nil
		}, func(m PackEntry) error {
			m.Codec, m.StoredLen, m.BlockLen = h.Codec, h.StoredLen, h.BlockLen
			if !m.Valid() {
				t.Fatalf("a delta walked is not valid: %+v", m)
			}
			if got, err := memberData(block, m, base); err == nil && Sum(m.Kind, got) != m.ID {
				t.Fatal("memberData returned a delta's bytes that do not match its ID")
			}
			return nil
		})
		e.Kind = KindChunk
		e.ID = Sum(e.Kind, block) // any ID: memberData must not return bytes of another
		if got, err := memberData(block, e, base); err == nil && Sum(e.Kind, got) != e.ID {
			t.Fatal("memberData returned bytes that do not match the ID")
		}
		if m, data, err := parseMember(block, int(member)); err == nil && uint64(len(data)) != m.span()-memberHeaderSize && uint64(len(data)) != m.span()-deltaHeaderSize {
			t.Fatal("parseMember returned bytes of another length")
		}
	})
}

// TestSweepRefusesWhenRequiredObjectsAreNotIndexed: a sweep told that N
// objects are required refuses, before it changes the index or a pack,
// when fewer of them are indexed (an index that lost a key would take the
// object for garbage); with the count right it sweeps.
func TestSweepRefusesWhenRequiredObjectsAreNotIndexed(t *testing.T) {
	db, dir := testDB(t)
	var objects [][]byte
	for i := range 6 {
		objects = append(objects, textObject(i, 500))
	}
	ids := putAll(t, db, dir, objects)
	required := map[ID]bool{ids[0]: true, ids[1]: true, Sum(KindChunk, []byte("never stored")): true}
	live := func(id ID) bool { return required[id] }
	beforeObjects, beforePacks := len(db.objects), len(dir.packs)
	_, err := PrepareSweep(context.Background(), db, dir, live, SweepOptions{
		RepackThreshold: -1, Required: live, RequiredCount: len(required),
	})
	if !errors.Is(err, ErrLiveNotIndexed) || !strings.Contains(err.Error(), "1 of 3 are missing") {
		t.Fatalf("sweep with a required object missing: %v", err)
	}
	if len(db.objects) != beforeObjects || len(dir.packs) != beforePacks {
		t.Fatalf("a refused sweep changed the index or the packs: %d -> %d objects, %d -> %d packs", beforeObjects, len(db.objects), beforePacks, len(dir.packs))
	}
	delete(required, Sum(KindChunk, []byte("never stored")))
	sw := sweep(t, db, dir, live, SweepOptions{RepackThreshold: -1, Required: live, RequiredCount: len(required)})
	if sw.ObjectsDeleted != 4 {
		t.Fatalf("%d objects deleted, want the 4 not required", sw.ObjectsDeleted)
	}
	s := NewStore(dir, db)
	defer s.Close()
	for i, id := range ids {
		got, err := s.Get(context.Background(), id)
		if required[id] != (err == nil) || (err == nil && !bytes.Equal(got, objects[i])) {
			t.Fatalf("object %d (required %v) after the sweep: %v", i, required[id], err)
		}
	}
}

// TestSweepWritesSmallerBlocks: a sweep merges packs of many projects, so
// the blocks it writes are at most mergedBlockTarget (plus the member that
// crossed it), a quarter of a snapshot's: reading one object decodes less
// of other projects' ones. Every live object still reads back.
func TestSweepWritesSmallerBlocks(t *testing.T) {
	db, dir := testDB(t)
	var objects [][]byte
	for i := range 300 {
		objects = append(objects, textObject(i, 8000))
	}
	ids := putAll(t, db, dir, objects)
	largest := func() uint32 {
		var n uint32
		for _, e := range packTables(t, dir) {
			n = max(n, e.BlockLen)
		}
		return n
	}
	if n := largest(); n < BlockTargetSize {
		t.Fatalf("a writer's largest block holds %d bytes, want %d or more", n, BlockTargetSize)
	}
	dead := map[ID]bool{}
	for i := 0; i < len(ids); i += 37 { // one at least in each block: none is kept whole
		dead[ids[i]] = true
	}
	live := func(id ID) bool { return !dead[id] }
	sweep(t, db, dir, live, SweepOptions{RepackThreshold: -1})
	if n := largest(); n > mergedBlockTarget+8000+memberHeaderSize {
		t.Fatalf("a sweep's largest block holds %d bytes, want at most %d and one member", n, mergedBlockTarget)
	}
	s := NewStore(dir, db)
	defer s.Close()
	for i, id := range ids {
		if got, err := s.Get(context.Background(), id); dead[id] != (err != nil) || (err == nil && !bytes.Equal(got, objects[i])) {
			t.Fatalf("object %d (dead %v) after the sweep: %v", i, dead[id], err)
		}
	}
}

// TestSweepKeepsWholeLiveBlocks: a sweep copies a block of keptBlockMin
// plain bytes or more whose members are all live as it is stored, byte for
// byte, and compresses again only the members of the others: a block with
// a dead member, and small blocks (a turn's), which it merges. Every live
// object reads back, from its new place.
func TestSweepKeepsWholeLiveBlocks(t *testing.T) {
	db, dir := testDB(t)
	var big, small [][]byte
	for i := range 300 {
		big = append(big, textObject(i, 8000))
	}
	for i := range 6 {
		small = append(small, textObject(1000+i, 2000))
	}
	ids := putAll(t, db, dir, big)
	var smallIDs []ID
	for _, o := range small { // a pack each, of one small block
		smallIDs = append(smallIDs, putAll(t, db, dir, [][]byte{o})...)
	}
	before := blockSums(t, dir)
	was := map[[32]byte]bool{}
	for _, sum := range before {
		was[sum] = true
	}
	if before[ids[0]] == before[ids[len(ids)-1]] {
		t.Fatal("the big objects fill one block: the test needs several")
	}
	sweep(t, db, dir, func(id ID) bool { return id != ids[0] }, SweepOptions{RepackThreshold: -1})
	after := blockSums(t, dir)
	for i, id := range ids[1:] {
		if kept := was[after[id]]; kept != (before[id] != before[ids[0]]) {
			t.Fatalf("big object %d: its block kept as it was stored %v, want only the blocks without a dead member", i+1, kept)
		}
	}
	for _, id := range smallIDs {
		if was[after[id]] || after[id] != after[smallIDs[0]] {
			t.Fatalf("small object %s was not merged with the others into a new block", id.Short())
		}
	}
	s := NewStore(dir, db)
	defer s.Close()
	want := append(big[1:], small...)
	for i, id := range append(ids[1:], smallIDs...) {
		if got, err := s.Get(context.Background(), id); err != nil || !bytes.Equal(got, want[i]) {
			t.Fatalf("object %s after the sweep: %v", id.Short(), err)
		}
	}
}

// TestSweepChecksAWholeBlockItKeeps: a block the sweep would keep as it is
// stored is checked member by member all the same: a damaged member (in a
// block of random bytes, stored raw, so that the block still decodes)
// fails the sweep, which asks for verify, and nothing is copied.
func TestSweepChecksAWholeBlockItKeeps(t *testing.T) {
	db, dir := testDB(t)
	var objects [][]byte
	for i := range 40 {
		objects = append(objects, randomObject(i, 8000))
	}
	putAll(t, db, dir, objects)
	names, _ := dir.names()
	b := dir.bytes(names[0])
	table := packTables(t, dir)
	for i := range 3 { // four small packs: the sweep merges them
		putAll(t, db, dir, [][]byte{textObject(i, 100)})
	}
	if e := table[5]; e.Codec != CodecRaw || e.BlockLen < keptBlockMin {
		t.Fatalf("the block is stored by codec %d, %d plain bytes: the test needs a raw one of %d or more", e.Codec, e.BlockLen, keptBlockMin)
	}
	e := table[5]
	b[int(e.Offset)+blockHeaderSize+int(e.Member)+memberHeaderSize+10] ^= 1
	dir.set(names[0], b)
	_, err := PrepareSweep(context.Background(), db, dir, func(ID) bool { return true }, SweepOptions{RepackThreshold: -1})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "run verify") {
		t.Fatalf("sweep over a damaged member of a whole live block: %v, want ErrCorrupt asking for verify", err)
	}
	if after, _ := dir.names(); len(after) != 4 {
		t.Fatalf("the refused sweep left %d packs, want the four it found", len(after))
	}
}

// blockSums returns, for each object stored in a block, the hash of its
// block's stored bytes as its pack holds them.
func blockSums(t *testing.T, dir *memPacks) map[ID][32]byte {
	t.Helper()
	out := map[ID][32]byte{}
	eachPack(t, dir, func(b []byte, table []PackEntry) {
		for _, e := range table {
			if e.InBlock() {
				out[e.ID] = sha256.Sum256(b[e.Offset : int(e.Offset)+blockHeaderSize+int(e.StoredLen)])
			}
		}
	})
	return out
}

// TestFlushedChunksDoNotDependOnPutOrder: the same chunks put in two
// orders, as parallel hashers may finish them, make the same pack, and
// each reads back from it.
func TestFlushedChunksDoNotDependOnPutOrder(t *testing.T) {
	var objects [][]byte
	for i := range 6 {
		objects = append(objects, textObject(i, 3000))
	}
	reversed := slices.Clone(objects)
	slices.Reverse(reversed)
	var packs [][]byte
	for _, order := range [][][]byte{objects, reversed} {
		db, dir := testDB(t)
		putAll(t, db, dir, order)
		if len(dir.packs) != 1 {
			t.Fatalf("%d packs, want 1", len(dir.packs))
		}
		for _, b := range dir.packs {
			packs = append(packs, b)
		}
		if got := readable(t, db, dir, objects); got != len(objects) {
			t.Fatalf("%d of %d objects read back", got, len(objects))
		}
	}
	if !bytes.Equal(packs[0], packs[1]) {
		t.Fatalf("packs of %d and %d bytes differ with the order of the puts", len(packs[0]), len(packs[1]))
	}
}

// TestBulkWriterTakesTheDefaultLevel: a Writer set to bulk stores each
// block of smallBlock plain bytes or more as zstd's default level
// compresses it, in blocks of bulkTarget, one not set to bulk as the
// better level does, in blocks of BlockTargetSize, and both take the
// fastest level for a smaller block; every object reads back.
func TestBulkWriterTakesTheDefaultLevel(t *testing.T) {
	var objects [][]byte
	for i := range 145 {
		objects = append(objects, textObject(i, 8000)) // a full block, and a smaller one of about 110 KB
	}
	for _, bulk := range []bool{false, true} {
		db, dir := testDB(t)
		w := NewWriter(dir, NewStore(dir, db))
		if bulk {
			w.SetBulk()
		}
		ctx := context.Background()
		for _, o := range objects {
			if _, err := w.Put(ctx, KindChunk, o); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Commit(ctx, db, false); err != nil {
			t.Fatal(err)
		}
		names, _ := dir.names()
		b := dir.bytes(names[0])
		blocks := map[uint32]PackEntry{}
		for _, e := range packTables(t, dir) {
			blocks[e.Offset] = e
		}
		sizes := map[*encoder]int{}
		target := BlockTargetSize
		if bulk {
			target = bulkTarget
		}
		for _, e := range blocks {
			stored := b[int(e.Offset)+blockHeaderSize : int(e.Offset)+blockHeaderSize+int(e.StoredLen)]
			plain, err := decompress(e.Codec, stored, e.BlockLen)
			if err != nil {
				t.Fatal(err)
			}
			want := blockEncoder
			switch {
			case len(plain) < smallBlock:
				want = fastEncoder
			case bulk:
				want = bulkEncoder
			}
			if _, again, _ := want.compress(plain, nil, nil); !bytes.Equal(again, stored) {
				t.Fatalf("bulk %v: a block of %d plain bytes is not stored as the level it should take compresses it", bulk, len(plain))
			}
			if len(plain) >= target+memberHeaderSize+8000 {
				t.Fatalf("bulk %v: a block of %d plain bytes, want it sealed past %d by one member", bulk, len(plain), target)
			}
			sizes[want]++
		}
		if full := (len(objects)*(8000+memberHeaderSize) - 110_000) / target; len(sizes) != 2 || sizes[fastEncoder] != 1 || sizes[blockEncoder]+sizes[bulkEncoder] != full {
			t.Fatalf("bulk %v: blocks by encoder %v, want %d full blocks and a smaller one", bulk, sizes, full)
		}
		if got := readable(t, db, dir, objects); got != len(objects) {
			t.Fatalf("bulk %v: %d of %d objects read back", bulk, got, len(objects))
		}
	}
}

// fuzzBase is the base of the delta that FuzzReadBlock's seed holds.
var fuzzBase = textObject(7, 4000)
