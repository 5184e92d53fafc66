package manifest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"

	chunkers "github.com/PlakarKorp/go-cdc-chunkers"
	_ "github.com/PlakarKorp/go-cdc-chunkers/chunkers/fastcdc" // registers fastcdc-v1.0.0

	"github.com/casckpt/casckpt/cas"
)

// Chunking parameters. They are part of the store format: the same bytes
// must always be cut into the same chunks to deduplicate, so a store records
// ChunkerName when it is created and refuses a casckpt that chunks otherwise.
const (
	chunkAlgorithm = "fastcdc-v1.0.0"
	chunkMin       = 16 << 10
	chunkNormal    = 64 << 10
	chunkMax       = 256 << 10
	// singleChunkMax: content up to this size is stored as one chunk.
	singleChunkMax = chunkMax
)

// ChunkerName names the chunking algorithm and its sizes, as a store
// records it. Changing any chunking parameter changes the name.
var ChunkerName = fmt.Sprintf("%s min=%d normal=%d max=%d single<=%d",
	chunkAlgorithm, chunkMin, chunkNormal, chunkMax, singleChunkMax)

// Content is what PutContent stored of one file's bytes.
type Content struct {
	Chunks []cas.ID
	Size   int64
	Lines  int64
	Binary bool
	// Grew is set when content expected to fit one chunk did not: nothing
	// was stored, and the caller may read the file again.
	Grew bool
	// TooBig is set when the content is longer than the limit: nothing past
	// the limit was read or stored.
	TooBig bool
}

// chunkBuffers are PutContent's chunking buffers (2*chunkMax bytes each),
// reused across calls and goroutines.
var chunkBuffers = sync.Pool{New: func() any { b := make([]byte, 2*chunkMax); return &b }}

// PutContent stores the bytes of r as chunks through put: one chunk for
// content whose expected size is at most 256 KiB, FastCDC (16/64/256 KiB)
// above, so the same bytes always get the same chunk IDs. size is the
// expected length, as a stat reported it; at most limit+1 bytes are read
// (math.MaxInt64: no limit), and content longer than limit sets TooBig.
//
// A failure to read r is returned as an *os.PathError with Op "read" and no
// Path, for the caller to name the file; an error of put is returned as put
// returned it. It is safe for concurrent use.
func PutContent(ctx context.Context, put cas.Putter, r io.Reader, size, limit int64) (Content, error) {
	if limit < math.MaxInt64 {
		r = io.LimitReader(r, limit+1)
	}
	if size < smallContent {
		c, grew, err := putSmall(ctx, put, &r, size, limit)
		if !grew || err != nil {
			return c, err
		}
	}
	bufp := chunkBuffers.Get().(*[]byte)
	defer chunkBuffers.Put(bufp)
	if size <= singleChunkMax {
		return putSingle(ctx, put, r, limit, *bufp)
	}
	var c Content
	var lines LineCounter
	ch, err := chunkers.NewChunkerBuffer(chunkAlgorithm, r, &chunkers.ChunkerOpts{MinSize: chunkMin, NormalSize: chunkNormal, MaxSize: chunkMax}, *bufp)
	if err != nil {
		return c, err
	}
	for {
		data, cerr := ch.Next()
		if cerr != nil && cerr != io.EOF {
			return c, &os.PathError{Op: "read", Err: cerr}
		}
		if c.Size+int64(len(data)) > limit {
			c.TooBig = true
			return c, nil
		}
		if len(data) > 0 {
			id, err := put.Put(ctx, cas.KindChunk, data)
			if err != nil {
				return c, err
			}
			c.Chunks = append(c.Chunks, id)
			c.Size += int64(len(data))
			_, _ = lines.Write(data)
		}
		if cerr == io.EOF {
			break
		}
	}
	c.Lines, c.Binary = lines.Result()
	return c, nil
}

// smallContent: content expected to be shorter is read into a buffer of
// its own size, not a pooled chunking buffer, which a short-lived process
// would have to fault in page by page for a few small files.
const smallContent = 64 << 10

// putSmall stores content expected to be size bytes (under smallContent)
// as one chunk. When the content turns out longer, it stores nothing,
// reports grew, and leaves in *r a reader of the whole content again.
func putSmall(ctx context.Context, put cas.Putter, r *io.Reader, size, limit int64) (c Content, grew bool, err error) {
	buf := make([]byte, size+1)
	n, err := io.ReadFull(*r, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return c, false, &os.PathError{Op: "read", Err: err}
	}
	if n > int(size) { // longer than the stat said: read on as a larger file
		*r = io.MultiReader(bytes.NewReader(buf[:n]), *r)
		return c, true, nil
	}
	c, err = putChunk(ctx, put, buf[:n], limit)
	return c, false, err
}

// putSingle stores content expected to fit one chunk; buf holds more than
// singleChunkMax bytes.
func putSingle(ctx context.Context, put cas.Putter, r io.Reader, limit int64, buf []byte) (Content, error) {
	var c Content
	n, err := io.ReadFull(r, buf[:singleChunkMax+1])
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return c, &os.PathError{Op: "read", Err: err}
	}
	if int64(n) > limit {
		c.TooBig = true
		return c, nil
	}
	if n > singleChunkMax { // grew past one chunk while we looked
		c.Grew = true
		return c, nil
	}
	return putChunk(ctx, put, buf[:n], limit)
}

// putChunk stores data, the whole content, as one chunk, unless it is
// longer than limit (TooBig).
func putChunk(ctx context.Context, put cas.Putter, data []byte, limit int64) (Content, error) {
	var c Content
	if int64(len(data)) > limit {
		c.TooBig = true
		return c, nil
	}
	c.Size = int64(len(data))
	c.Lines, c.Binary = CountLines(data)
	if len(data) > 0 {
		id, err := put.Put(ctx, cas.KindChunk, data)
		if err != nil {
			return c, err
		}
		c.Chunks = []cas.ID{id}
	}
	return c, nil
}

// PutFile stores a file's content exactly as a snapshot does (same
// chunking, so the same bytes always deduplicate) and returns its entry,
// named name. r must hold exactly size bytes: content longer than that
// is an error, and nothing of it is kept by the returned entry.
func PutFile(ctx context.Context, put cas.Putter, name string, r io.Reader, size int64, exec bool) (Entry, error) {
	c, err := PutContent(ctx, put, r, size, size)
	if err != nil {
		return Entry{}, err
	}
	if c.Grew || c.TooBig {
		return Entry{}, errors.New("content longer than its stated size")
	}
	return Entry{Name: name, Kind: KindFile, Exec: exec, Size: c.Size,
		Lines: c.Lines, Binary: c.Binary, Chunks: c.Chunks}, nil
}

// FileReader streams a file entry's content chunk by chunk, each verified.
type FileReader struct {
	ctx    context.Context
	g      cas.Getter
	chunks []cas.ID
	buf    []byte
}

// NewFileReader returns a reader of file entry e's bytes.
func NewFileReader(ctx context.Context, g cas.Getter, e Entry) *FileReader {
	return &FileReader{ctx: ctx, g: g, chunks: e.Chunks}
}

// Read implements io.Reader.
func (r *FileReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if len(r.chunks) == 0 {
			return 0, io.EOF
		}
		b, err := r.g.Get(r.ctx, r.chunks[0])
		if err != nil {
			return 0, err
		}
		r.buf, r.chunks = b, r.chunks[1:]
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// ReadFile returns the whole content of file entry e.
func ReadFile(ctx context.Context, g cas.Getter, e Entry) ([]byte, error) {
	out := make([]byte, 0, e.Size)
	for _, c := range e.Chunks {
		b, err := g.Get(ctx, c)
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	if int64(len(out)) != e.Size {
		return nil, fmt.Errorf("%w: %q has %d bytes, its entry says %d", cas.ErrCorrupt, e.Name, len(out), e.Size)
	}
	return out, nil
}
