package manifest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/castest"
)

// TestChunkerName: stores already written record this exact name; a
// change of any chunking constant must show as a different name.
func TestChunkerName(t *testing.T) {
	const want = "fastcdc-v1.0.0 min=16384 normal=65536 max=262144 single<=262144"
	if ChunkerName != want {
		t.Fatalf("ChunkerName = %q, stores record %q", ChunkerName, want)
	}
}

// pattern returns n bytes of content that FastCDC cuts at several points.
func pattern(n int) []byte {
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i * 7 % 251)
	}
	return data
}

func TestPutFileChunksALargeFile(t *testing.T) {
	ctx := context.Background()
	data := pattern(3 << 20)
	m := castest.NewMemory()
	e, err := PutFile(ctx, m, "big", bytes.NewReader(data), int64(len(data)), true)
	if err != nil || len(e.Chunks) < 4 {
		t.Fatalf("3 MiB file in %d chunks: %v", len(e.Chunks), err)
	}
	if e.Name != "big" || e.Kind != KindFile || !e.Exec || e.Size != int64(len(data)) || !e.Binary {
		t.Fatalf("entry %+v", e)
	}
	for _, c := range e.Chunks {
		b, err := m.Get(ctx, c)
		if err != nil || len(b) > chunkMax || len(b) == 0 {
			t.Fatalf("chunk of %d bytes (max %d): %v", len(b), chunkMax, err)
		}
	}
	got, err := ReadFile(ctx, m, e)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("content differs: %v", err)
	}
	again, err := PutFile(ctx, castest.NewMemory(), "other", bytes.NewReader(data), int64(len(data)), false)
	if err != nil || !equalIDs(again.Chunks, e.Chunks) {
		t.Fatalf("the same bytes chunked differently: %v", err)
	}
}

func equalIDs(a, b []cas.ID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestPutFileSmallContentIsOneChunk: content up to 256 KiB is one chunk
// named by the hash of all of it; empty content has no chunk.
func TestPutFileSmallContentIsOneChunk(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{0, 1, 5000, singleChunkMax} {
		data := pattern(n)
		e, err := PutFile(ctx, castest.NewMemory(), "f", bytes.NewReader(data), int64(n), false)
		if err != nil {
			t.Fatal(err)
		}
		want := []cas.ID{cas.Sum(cas.KindChunk, data)}
		if n == 0 {
			want = nil
		}
		if e.Size != int64(n) || !equalIDs(e.Chunks, want) {
			t.Fatalf("%d bytes: size %d, %d chunks", n, e.Size, len(e.Chunks))
		}
	}
	data := pattern(singleChunkMax + 1)
	e, err := PutFile(ctx, castest.NewMemory(), "f", bytes.NewReader(data), int64(len(data)), false)
	if err != nil || len(e.Chunks) < 2 {
		t.Fatalf("%d bytes in %d chunks: %v", len(data), len(e.Chunks), err)
	}
}

func TestPutFileCountsLines(t *testing.T) {
	for _, tc := range []struct {
		data   string
		lines  int64
		binary bool
	}{{"", 0, false}, {"a\nb\n", 2, false}, {"a\nb", 2, false}, {"a\x00b\n", 0, true}} {
		e, err := PutFile(context.Background(), castest.NewMemory(), "f", strings.NewReader(tc.data), int64(len(tc.data)), false)
		if err != nil || e.Lines != tc.lines || e.Binary != tc.binary {
			t.Fatalf("%q: %d lines, binary %v, %v; want %d, %v", tc.data, e.Lines, e.Binary, err, tc.lines, tc.binary)
		}
	}
	big := strings.Repeat("line\n", 100_000)
	e, err := PutFile(context.Background(), castest.NewMemory(), "f", strings.NewReader(big), int64(len(big)), false)
	if err != nil || e.Lines != 100_000 || e.Binary {
		t.Fatalf("chunked text: %d lines, binary %v, %v", e.Lines, e.Binary, err)
	}
}

// TestPutFileRefusesContentLongerThanStated, on both the one-chunk and the
// chunked path.
func TestPutFileRefusesContentLongerThanStated(t *testing.T) {
	for _, stated := range []int{10, singleChunkMax + 10} {
		data := pattern(stated + 300_000)
		_, err := PutFile(context.Background(), castest.NewMemory(), "f", bytes.NewReader(data), int64(stated), false)
		if err == nil {
			t.Fatalf("stated %d bytes, given %d: no error", stated, len(data))
		}
	}
}

// countingPutter stores in memory and counts the bytes it was given.
type countingPutter struct {
	*castest.Memory
	bytes atomic.Int64
}

func (p *countingPutter) Put(ctx context.Context, kind cas.Kind, data []byte) (cas.ID, error) {
	p.bytes.Add(int64(len(data)))
	return p.Memory.Put(ctx, kind, data)
}

// TestPutContentStopsAtTheLimit: content past the limit sets TooBig and no
// chunk past the limit is stored, on both paths.
func TestPutContentStopsAtTheLimit(t *testing.T) {
	for _, tc := range []struct{ size, limit int64 }{{100, 1000}, {2 << 20, 1 << 20}} {
		p := &countingPutter{Memory: castest.NewMemory()}
		c, err := PutContent(context.Background(), p, bytes.NewReader(pattern(2<<20)), tc.size, tc.limit)
		if err != nil || !c.TooBig || p.bytes.Load() > tc.limit {
			t.Fatalf("stated %d, limit %d: TooBig %v, %d bytes stored, %v", tc.size, tc.limit, c.TooBig, p.bytes.Load(), err)
		}
	}
}

// TestPutContentGrew: content stated to fit one chunk that turns out
// longer sets Grew and stores nothing.
func TestPutContentGrew(t *testing.T) {
	p := &countingPutter{Memory: castest.NewMemory()}
	c, err := PutContent(context.Background(), p, bytes.NewReader(pattern(singleChunkMax+1)), 10, math.MaxInt64)
	if err != nil || !c.Grew || c.TooBig || p.bytes.Load() != 0 {
		t.Fatalf("Grew %v, TooBig %v, %d bytes stored, %v", c.Grew, c.TooBig, p.bytes.Load(), err)
	}
}

// TestPutContentSmallThatGrew: content stated to be small that turns out
// longer, though within one chunk, is stored whole, as one chunk of all
// its bytes.
func TestPutContentSmallThatGrew(t *testing.T) {
	for _, n := range []int{11, smallContent + 5, singleChunkMax} {
		m := castest.NewMemory()
		data := pattern(n)
		c, err := PutContent(context.Background(), m, bytes.NewReader(data), 10, math.MaxInt64)
		if err != nil || c.Grew || c.TooBig || c.Size != int64(n) || len(c.Chunks) != 1 {
			t.Fatalf("%d bytes stated as 10: %+v, %v", n, c, err)
		}
		if got, err := m.Get(context.Background(), c.Chunks[0]); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes stated as 10: the chunk holds %d bytes, %v", n, len(got), err)
		}
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, syscall.EIO }

// sharedErrPutter fails every store with one error value.
type sharedErrPutter struct{ err error }

func (p sharedErrPutter) Put(context.Context, cas.Kind, []byte) (cas.ID, error) {
	return cas.ID{}, p.err
}

// TestPutContentErrors: a read failure is a nameless *os.PathError for the
// caller to name; a store failure is the store's own error value.
func TestPutContentErrors(t *testing.T) {
	ctx := context.Background()
	for _, size := range []int64{10, 1 << 20} {
		_, err := PutContent(ctx, castest.NewMemory(), io.MultiReader(bytes.NewReader(pattern(100)), failingReader{}), size, math.MaxInt64)
		var pe *os.PathError
		if !errors.As(err, &pe) || pe.Op != "read" || pe.Path != "" || !errors.Is(err, syscall.EIO) {
			t.Fatalf("stated %d, read fails: %#v", size, err)
		}
		shared := &os.PathError{Op: "write", Path: "/store/packs/x.pack", Err: syscall.ENOSPC}
		_, err = PutContent(ctx, sharedErrPutter{shared}, bytes.NewReader(pattern(int(size))), size, math.MaxInt64)
		if err != error(shared) {
			t.Fatalf("stated %d, store fails: %v; want the store's error as it is", size, err)
		}
	}
}
