package cas

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// testDB returns an empty object index and pack store.
func testDB(t *testing.T) (*memIndex, *memPacks) {
	t.Helper()
	return newMemIndex(), newMemPacks()
}

// putAll stores objects through a Writer and commits them.
func putAll(t *testing.T, db *memIndex, dir *memPacks, objects [][]byte) []ID {
	t.Helper()
	ctx := context.Background()
	var ids []ID
	var w *Writer
	err := within(db, func(tx *memIndex) error {
		w = NewWriter(dir, NewStore(dir, tx))
		for _, o := range objects {
			id, err := w.Put(ctx, KindChunk, o)
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return w.Flush(ctx)
	})
	if err == nil {
		err = within(db, func(wtx *memIndex) error { _, err := w.Commit(ctx, wtx, false); return err })
	}
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestDomainsSeparateKinds(t *testing.T) {
	data := []byte("same bytes")
	if Sum(KindChunk, data) == Sum(KindTree, data) {
		t.Fatal("a chunk and a tree with the same bytes share an ID")
	}
	if Sum(KindChunk, data) != Sum(KindChunk, append([]byte(nil), data...)) {
		t.Fatal("Sum is not deterministic")
	}
}

func TestParseID(t *testing.T) {
	id := Sum(KindChunk, []byte("x"))
	got, err := ParseID(id.String())
	if err != nil || got != id {
		t.Fatalf("round trip: %v %v", got, err)
	}
	for _, bad := range []string{"", "abc", strings.Repeat("g", 64), id.String()[:63]} {
		if _, err := ParseID(bad); !errors.Is(err, ErrBadID) {
			t.Errorf("ParseID(%q) = %v, want ErrBadID", bad, err)
		}
	}
}

func TestPutGetRoundTripAndDedup(t *testing.T) {
	db, dir := testDB(t)
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 300_000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	objects := [][]byte{
		{},
		[]byte("small"),
		bytes.Repeat([]byte("compressible "), 10_000),
		random, // incompressible: stored raw
	}
	ids := putAll(t, db, dir, objects)
	// The same objects again are deduplicated: nothing new is written.
	again := putAll(t, db, dir, objects)
	for i := range ids {
		if ids[i] != again[i] {
			t.Fatal("IDs changed between puts")
		}
	}
	packs, _ := dir.names()
	if len(packs) != 1 {
		t.Fatalf("want one pack after deduplicated puts, found %d", len(packs))
	}
	err := within(db, func(tx *memIndex) error {
		s := NewStore(dir, tx)
		defer s.Close()
		for i, id := range ids {
			got, err := s.Get(context.Background(), id)
			if err != nil {
				return err
			}
			if !bytes.Equal(got, objects[i]) {
				t.Errorf("object %d differs", i)
			}
		}
		loc, err := s.Locate(ids[3])
		if err != nil {
			return err
		}
		if loc.Codec != CodecRaw {
			t.Errorf("random data stored with codec %d, want raw", loc.Codec)
		}
		loc, _ = s.Locate(ids[2])
		if loc.Codec != CodecZstd || loc.StoredLen >= loc.RawLen/10 {
			t.Errorf("compressible data stored as codec %d, %d of %d bytes", loc.Codec, loc.StoredLen, loc.RawLen)
		}
		_, err = s.Get(context.Background(), Sum(KindChunk, []byte("absent")))
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("Get of a missing object: %v, want ErrNotFound", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The pack's table describes every object.
	b := dir.bytes(packs[0])
	entries, err := ReadPackTable(bytes.NewReader(b), int64(len(b)))
	if err != nil || len(entries) != len(objects) {
		t.Fatalf("pack table: %d entries, %v", len(entries), err)
	}
}

func TestGetDetectsCorruption(t *testing.T) {
	db, dir := testDB(t)
	// The first is stored alone, the second in a block after it.
	ids := putAll(t, db, dir, [][]byte{bytes.Repeat([]byte("abc"), 100_000), []byte("second object, intact")})
	packs, _ := dir.names()
	b := dir.bytes(packs[0])
	b[packHeaderSize+objectHeaderSize+5] ^= 0xff // inside the first object's data
	dir.set(packs[0], b)
	within(db, func(tx *memIndex) error {
		s := NewStore(dir, tx)
		defer s.Close()
		if _, err := s.Get(context.Background(), ids[0]); !errors.Is(err, ErrCorrupt) {
			t.Errorf("flipped byte: %v, want ErrCorrupt", err)
		}
		if _, err := s.Get(context.Background(), ids[1]); err != nil {
			t.Errorf("intact object beside a damaged one: %v", err)
		}
		return nil
	})
	dir.Remove(context.Background(), packs[0])
	within(db, func(tx *memIndex) error {
		s := NewStore(dir, tx)
		defer s.Close()
		if _, err := s.Get(context.Background(), ids[1]); !errors.Is(err, ErrCorrupt) {
			t.Errorf("missing pack: %v, want ErrCorrupt", err)
		}
		return nil
	})
}

func TestAbortLeavesNoFiles(t *testing.T) {
	_, dir := testDB(t)
	w := NewWriter(dir, nil)
	if _, err := w.Put(context.Background(), KindChunk, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Put(context.Background(), KindChunk, []byte("y")); err != nil {
		t.Fatal(err) // a second pack, left incomplete
	}
	w.Abort()
	if left, incomplete := dir.names(); len(left) != 0 || incomplete != 0 {
		t.Fatalf("abort left %d packs and %d incomplete ones", len(left), incomplete)
	}
}

// TestCommitRefusesAVanishedPack: a pack deleted between its flush and the
// commit (clear ran, or a sweep that did not see it) is never referenced.
func TestCommitRefusesAVanishedPack(t *testing.T) {
	db, dir := testDB(t)
	ctx := context.Background()
	w := NewWriter(dir, nil)
	id, err := w.Put(ctx, KindChunk, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	packs, _ := dir.names()
	for _, p := range packs {
		dir.Remove(ctx, p)
	}
	err = within(db, func(tx *memIndex) error { _, err := w.Commit(ctx, tx, false); return err })
	if err == nil || !strings.Contains(err.Error(), "vanished") {
		t.Fatalf("commit of a vanished pack: %v", err)
	}
	within(db, func(tx *memIndex) error {
		if ok, _ := NewStore(dir, tx).Has(id); ok {
			t.Fatal("the object of a vanished pack is indexed")
		}
		return nil
	})
}

func FuzzDecodeTrailer(f *testing.F) {
	f.Add(encodeTrailer([]PackEntry{{ID: Sum(KindChunk, []byte("a")), Kind: KindChunk, Offset: packHeaderSize, RawLen: 1, StoredLen: 1}}, false), int64(200))
	f.Add(encodeTrailer([]PackEntry{
		{ID: Sum(KindChunk, []byte("a")), Kind: KindChunk, Offset: packHeaderSize, RawLen: 1, StoredLen: 1},
		{ID: Sum(KindChunk, []byte("b")), Kind: KindChunk, Codec: CodecZstd, Offset: 53, RawLen: 1, StoredLen: 20, BlockLen: 78},
		{ID: Sum(KindTree, []byte("c")), Kind: KindTree, Codec: CodecZstd, Offset: 53, RawLen: 1, StoredLen: 20, BlockLen: 78, Member: 39},
	}, false), int64(400))
	f.Add(encodeTrailer([]PackEntry{
		{ID: Sum(KindChunk, []byte("b")), Kind: KindChunk, Codec: CodecZstd, Offset: 8, RawLen: 200, StoredLen: 20, BlockLen: 120, DeltaLen: 30, Base: Sum(KindChunk, []byte("a"))},
	}, true), int64(400))
	f.Add(encodeTrailer(nil, false), int64(24))
	f.Fuzz(func(t *testing.T, tail []byte, size int64) {
		entries, err := DecodeTrailer(tail, size)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.end() > uint64(size) || !e.Valid() {
				t.Fatalf("entry invalid or beyond the pack: %+v", e)
			}
		}
	})
}

func FuzzReadObject(f *testing.F) {
	data := []byte("hello hello hello hello hello hello hello hello hello hello hello")
	codec, stored, _ := compress(data)
	e := PackEntry{ID: Sum(KindChunk, data), Kind: KindChunk, Codec: codec, Offset: 0, RawLen: uint32(len(data)), StoredLen: uint32(len(stored))}
	f.Add(append(appendObjectHeader(nil, e), stored...))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parseObjectHeader(b)
		if err != nil {
			return
		}
		got, err := readObject(bytes.NewReader(b), h)
		if err == nil && Sum(h.Kind, got) != h.ID {
			t.Fatal("readObject returned bytes that do not match the ID")
		}
	})
}

var errInjected = &os.PathError{Op: "write", Path: "pack", Err: syscall.EIO}

// TestWriteFailuresAtEveryStep fails each pack store operation of a pack
// write in turn (create, write, close, sync; the files beneath them are
// failed in cas/packstore's tests): the Writer must report the error, Abort
// must leave no pack behind, the index must be unchanged, and a later
// Writer must work.
func TestWriteFailuresAtEveryStep(t *testing.T) {
	ctx := context.Background()
	objects := [][]byte{bytes.Repeat([]byte("a"), 2<<20), bytes.Repeat([]byte("b"), 3<<20), []byte("small")}
	for n := 1; ; n++ {
		db, dir := testDB(t)
		calls := 0
		dir.fail = func(op, name string) error {
			if calls++; calls == n {
				return errInjected
			}
			return nil
		}
		w := NewWriter(dir, nil)
		var err error
		for _, o := range objects {
			if _, err = w.Put(ctx, KindChunk, o); err != nil {
				break
			}
		}
		if err == nil {
			err = w.Flush(ctx)
		}
		if calls < n { // every operation has been failed once
			if err != nil {
				t.Fatalf("no fault injected, yet: %v", err)
			}
			t.Logf("failed each of the %d operations of a write in turn", n-1)
			if n < 5 {
				t.Fatal("too few operations to have covered create, write, close and sync")
			}
			break
		}
		if !errors.Is(err, syscall.EIO) {
			t.Fatalf("fault at operation %d: error %v, want EIO", n, err)
		}
		w.Abort()
		if left, incomplete := dir.names(); len(left) != 0 || incomplete != 0 {
			t.Fatalf("fault at operation %d: %d packs and %d incomplete ones left after Abort", n, len(left), incomplete)
		}
		// The store works again once the disk does.
		dir.fail = nil
		ids := putAll(t, db, dir, objects)
		within(db, func(tx *memIndex) error {
			s := NewStore(dir, tx)
			defer s.Close()
			for i, id := range ids {
				if b, err := s.Get(ctx, id); err != nil || !bytes.Equal(b, objects[i]) {
					t.Fatalf("fault at operation %d: object %d after recovery: %v", n, i, err)
				}
			}
			return nil
		})
	}
}

// TestStoreBoundsOpenPacks: reading objects from many more packs than
// maxOpenPacks, from several goroutines at once, keeps at most that many
// readers open (plus those in use), every read returns its bytes, and
// Close closes every reader.
func TestStoreBoundsOpenPacks(t *testing.T) {
	db, dir := testDB(t)
	var ids []ID
	var objects [][]byte
	for i := range 3 * maxOpenPacks {
		o := []byte(strings.Repeat("object ", 10) + string(rune('a'+i%26)) + strings.Repeat("x", i))
		objects = append(objects, o)
		ids = append(ids, putAll(t, db, dir, [][]byte{o})...) // a pack each
	}
	s := NewStore(dir, db)
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			for i := range ids {
				k := (i*7 + g*13) % len(ids)
				got, err := s.Get(context.Background(), ids[k])
				if err == nil && !bytes.Equal(got, objects[k]) {
					err = errors.New("wrong bytes")
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if dir.peak > maxOpenPacks+4 {
		t.Fatalf("%d pack readers were open at once, over the %d bound and 4 in use", dir.peak, maxOpenPacks)
	}
	if err := s.Close(); err != nil || dir.open != 0 {
		t.Fatalf("after Close: %d readers open, %v", dir.open, err)
	}
}

// syncingPacks is a pack store that completes packs in the background
// (cas.PackSyncer): it records what its writers' Flushes sync.
type syncingPacks struct {
	*memPacks
	synced    [][]string // the names of each SyncPacks
	storeWide int        // Syncs
}

func (s *syncingPacks) SyncPacks(_ context.Context, names []string) error {
	s.synced = append(s.synced, names)
	return nil
}

func (s *syncingPacks) Sync(context.Context) error {
	s.storeWide++
	return nil
}

// TestFlushSyncsItsOwnPacks: on a store that is a PackSyncer, a Writer's
// Flush syncs exactly its own packs, not the store as a whole (whose Sync
// would return another writer's upload failure).
func TestFlushSyncsItsOwnPacks(t *testing.T) {
	_, mem := testDB(t)
	packs := &syncingPacks{memPacks: mem}
	ctx := context.Background()
	w := NewWriter(packs, nil)
	if _, err := w.Put(ctx, KindChunk, []byte("mine")); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	mine, _ := mem.names()
	if len(mine) == 0 || packs.storeWide != 0 || len(packs.synced) != 1 || !slices.Equal(packs.synced[0], mine) {
		t.Fatalf("flush synced %v (and the whole store %d times), want its own packs %v only", packs.synced, packs.storeWide, mine)
	}
}
