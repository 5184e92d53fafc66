package cas

import (
	"bytes"
	"context"
	"runtime"
	"testing"
)

// A snapshot's compressions and readers follow the cores up to
// maxParallel and no further: its memory must not grow with the cores.
func TestParallelismFollowsCoresUpToTheCap(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, tc := range []struct{ procs, want int }{{1, 1}, {2, 2}, {maxParallel, maxParallel}, {16, maxParallel}, {64, maxParallel}} {
		runtime.GOMAXPROCS(tc.procs)
		if got := Parallelism(); got != tc.want {
			t.Errorf("GOMAXPROCS %d: Parallelism() = %d, want %d", tc.procs, got, tc.want)
		}
	}
}

// A block's plain buffer that starts small keeps its bytes as it grows,
// and ends at getBlockBuffer's size, so that the pool takes it back.
func TestReservePlainKeepsBytesAndEndsAtThePoolSize(t *testing.T) {
	plain, want := make([]byte, 0, firstPlainSize), []byte(nil)
	for i := 0; len(plain) < BlockTargetSize; i++ {
		member := textObject(i, 1000+i*37%MaxMemberSize)
		plain = append(reservePlain(plain, len(member)), member...)
		want = append(want, member...)
	}
	if !bytes.Equal(plain, want) {
		t.Fatal("the bytes changed as the buffer grew")
	}
	if cap(plain) != blockBufferSize {
		t.Fatalf("cap %d, want blockBufferSize %d", cap(plain), blockBufferSize)
	}
	if got := reservePlain(plain, MaxMemberSize); cap(got) != blockBufferSize || &got[0] != &plain[0] {
		t.Fatal("a buffer of the pool's size was replaced")
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
	write(0)                        // the encoders' and decoder's first use allocates their tables
	for blockBuffers.Get() != nil { // empty the pool: a free buffer would hide an allocation
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	write(1000)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("a small write allocated %d bytes, want at most 1 MiB (a block buffer is %d)", got, blockBufferSize)
	}
}
