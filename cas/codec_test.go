package cas

import (
	"bytes"
	"context"
	"golang.org/x/sync/errgroup"
	"runtime"
	"testing"
)

// A Writer's compressions follow the cores up to their cap, the bulk
// one's and the others', and no further: its memory must not grow with
// the cores. Past the others' cap a bulk Writer's blocks are half the
// size.
func TestParallelismFollowsCoresUpToTheCap(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, tc := range []struct{ procs, slots, bulk, target int }{
		{1, 1, 1, BlockTargetSize}, {2, 2, 2, BlockTargetSize}, {4, 4, 4, BlockTargetSize},
		{5, 4, 5, BlockTargetSize / 2}, {8, 4, 8, BlockTargetSize / 2}, {64, 4, 8, BlockTargetSize / 2}} {
		runtime.GOMAXPROCS(tc.procs)
		target, bulk := bulkBlocks()
		if got := parallelism(); got != tc.slots || bulk != tc.bulk || target != tc.target {
			t.Errorf("GOMAXPROCS %d: %d at once, in bulk %d of %d bytes, want %d, and %d of %d", tc.procs, got, bulk, target, tc.slots, tc.bulk, tc.target)
		}
	}
}

// A block's plain buffer that starts small keeps its bytes as it grows,
// and ends at a full buffer's size, so that the Writer's buffers take it
// back, for a Writer's blocks and a bulk Writer's alike.
func TestReservePlainKeepsBytesAndEndsAtThePoolSize(t *testing.T) {
	for _, target := range []int{BlockTargetSize, BlockTargetSize / 2} {
		bufs := newBuffers(1, target)
		plain, want := bufs.plain(), []byte(nil)
		for i := 0; len(plain) < target; i++ {
			member := textObject(i, 1000+i*37%MaxMemberSize)
			plain = append(bufs.reserve(plain, len(member)), member...)
			want = append(want, member...)
		}
		if !bytes.Equal(plain, want) {
			t.Fatal("the bytes changed as the buffer grew")
		}
		if size := bufferSize(target); cap(plain) != size {
			t.Fatalf("blocks of %d: cap %d, want a full buffer's %d", target, cap(plain), size)
		}
		if got := bufs.reserve(plain, MaxMemberSize); cap(got) != cap(plain) || &got[0] != &plain[0] {
			t.Fatal("a full buffer was replaced")
		}
		bufs.put(plain)
		if got := bufs.plain(); cap(got) != cap(plain) || len(got) != 0 {
			t.Fatalf("a block after it got a buffer of cap %d, len %d, want the one given back", cap(got), len(got))
		}
	}
}

// A turn's few small objects are stored without a block-sized buffer:
// the 7.5 MiB that six such buffers took drew a collection into every turn
// of the command.
func TestSmallWriteAllocatesNoBlockBuffers(t *testing.T) {
	ctx := context.Background()
	write := func(seed int) {
		db, dir := newMemIndex(), newMemPacks()
		w := NewWriter(dir, NewStore(dir, db))
		for i := range 3 {
			if _, err := w.Put(ctx, KindChunk, textObject(seed+i, 20<<10)); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 10 {
			if _, err := w.Put(ctx, KindTree, textObject(seed+100+i, 600)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Commit(ctx, db, false); err != nil {
			t.Fatal(err)
		}
	}
	write(0) // the encoders' and decoder's first use allocates their tables
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	write(1000)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("a small write allocated %d bytes, want at most 1 MiB (a block buffer is %d)", got, bufferSize(BlockTargetSize))
	}
}

// Many more Puts at once than encoders, with a Writer's blocks and with
// the half-size blocks and 8 compressions of a bulk one on many cores:
// every object is stored and reads back, and the Writer's buffers stay
// within three a block token however many Puts wait (each used to keep a
// block, and its compressed and round-tripped bytes, while it waited for
// an encoder), and Flush gives every token back and lets the buffers go.
func TestManyPutsShareTheWritersBlocks(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(16)
	ctx := context.Background()
	const putters, each = 48, 6
	objects := make([][]byte, putters*each) // 56 MiB, over 50 blocks
	for i := range objects {
		objects[i] = textObject(i, 200<<10)
	}
	for _, size := range []struct{ target, slots int }{{BlockTargetSize, maxParallel}, {BlockTargetSize / 2, maxBulkParallel}} {
		write := func(objects [][]byte) (*Writer, *memIndex, []ID) {
			db, dir := newMemIndex(), newMemPacks()
			w := NewWriter(dir, NewStore(dir, db))
			w.sizeBlocks(size.target, size.slots)
			ids := make([]ID, len(objects))
			var g errgroup.Group
			for p := range putters {
				g.Go(func() error {
					for i := p; i < len(objects); i += putters {
						id, err := w.Put(ctx, KindChunk, objects[i])
						if err != nil {
							return err
						}
						ids[i] = id
					}
					return nil
				})
			}
			if err := g.Wait(); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			return w, db, ids
		}
		write(objects[:putters]) // the encoders' and decoders' first use allocates their tables
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		w, db, ids := write(objects)
		runtime.ReadMemStats(&after)
		if len(w.blocks) != 0 || len(w.bufs.free) != 0 {
			t.Errorf("blocks of %d: %d block tokens held and %d free buffers kept after Flush", size.target, len(w.blocks), len(w.bufs.free))
		}
		tokens := cap(w.blocks)
		stored := w.Stats().StoredBytes
		// Besides the buffers: the packs (in memory here, grown by
		// doubling), and the entries.
		limit := uint64(3*tokens*w.bufs.size) + 4*uint64(stored) + 8<<20
		if got := after.TotalAlloc - before.TotalAlloc; got > limit && !raceDetector {
			t.Errorf("blocks of %d: %d Puts at once of %d MiB allocated %d MiB, want at most %d MiB (%d block tokens)",
				size.target, putters, len(objects)*200>>10, got>>20, limit>>20, tokens)
		}
		if _, err := w.Commit(ctx, db, false); err != nil {
			t.Fatal(err)
		}
		s := NewStore(w.packs, db)
		for i, id := range ids {
			got, err := s.Get(ctx, id)
			if err != nil || !bytes.Equal(got, objects[i]) {
				t.Fatalf("blocks of %d: object %d: %v (%d bytes, want %d)", size.target, i, err, len(got), len(objects[i]))
			}
		}
	}
}
