package s3store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/casckpt/casckpt/cas"
	"github.com/minio/minio-go/v7"
)

// writer keeps a pack in memory and hands it to the store's uploads on
// Close.
type writer struct {
	s *Store
	// ctx is Create's without its cancellation: cas.Writer closes a pack
	// after the scan that filled it, whose context is done by then.
	ctx       context.Context
	name, key string
	buf       *segments
	ended     bool
}

func (w *writer) Write(b []byte) (int, error) {
	if w.ended {
		return 0, errEnded
	}
	return w.buf.Write(b)
}

// Close starts the pack's upload (see Store.startUpload), waiting while
// maxUploads are in flight; Sync returns its failure.
func (w *writer) Close() error {
	if w.ended {
		return errEnded
	}
	w.ended = true
	data := w.buf
	w.buf = nil
	return w.s.startUpload(w.ctx, w.name, w.key, data)
}

// Abort drops the bytes in memory: nothing was sent.
func (w *writer) Abort() error {
	w.ended = true
	w.buf = nil
	return nil
}

// reader reads ranges of one object with ranged GETs bound to its ETag.
type reader struct {
	s         *Store
	name, key string
	etag      string
	size      int64
	closed    atomic.Bool
}

func (r *reader) Size() int64 { return r.size }

func (r *reader) Close() error {
	r.closed.Store(true)
	return nil
}

// ReadAt reads p from off: from the cached blocks that hold it, with one
// ranged GET of those not cached (none past the end).
func (r *reader) ReadAt(p []byte, off int64) (int, error) {
	switch {
	case r.closed.Load():
		return 0, errClosed
	case off < 0:
		return 0, fmt.Errorf("s3 store: read %s at offset %d: negative offset", r.name, off)
	case off >= r.size:
		return 0, io.EOF
	case len(p) == 0:
		return 0, nil
	}
	n := min(int64(len(p)), r.size-off)
	first, last := off/blockSize, (off+n-1)/blockSize
	blocks := make([][]byte, last-first+1)
	lo, hi := int64(-1), int64(-1) // the blocks to fetch
	for i := range blocks {
		b, ok := r.s.blocks.get(blockKey{r.key, r.etag, first + int64(i)})
		if !ok {
			if lo < 0 {
				lo = first + int64(i)
			}
			hi = first + int64(i)
		}
		blocks[i] = b
	}
	if lo >= 0 {
		fetched, err := r.fetch(lo, hi)
		if err != nil {
			return 0, err
		}
		for i, b := range fetched {
			blocks[lo-first+int64(i)] = b
		}
	}
	k := 0
	for i, b := range blocks {
		start := int64(0)
		if i == 0 {
			start = off - first*blockSize
		}
		k += copy(p[k:n], b[start:])
	}
	if n < int64(len(p)) {
		return k, io.EOF
	}
	return k, nil
}

// fetch reads blocks lo to hi with one ranged GET bound to the ETag seen
// at Open, and caches them.
func (r *reader) fetch(lo, hi int64) ([][]byte, error) {
	start, end := lo*blockSize, min((hi+1)*blockSize, r.size)
	opts := minio.GetObjectOptions{}
	if err := opts.SetRange(start, end-1); err != nil {
		return nil, fmt.Errorf("s3 store: read %s: %v", r.name, err)
	}
	if r.etag != "" {
		if err := opts.SetMatchETag(r.etag); err != nil {
			return nil, fmt.Errorf("s3 store: read %s: %v", r.name, err)
		}
	}
	ctx, w := r.s.watch(context.Background())
	defer w.stop()
	body, _, header, err := r.s.core.GetObject(ctx, r.s.bucket, r.key, opts)
	if isPreconditionFailed(err) {
		return nil, fmt.Errorf("s3 store: read %s: the pack changed since it was opened (removed and written again): open it again", r.name)
	} else if errorResponse(err).StatusCode == http.StatusRequestedRangeNotSatisfiable {
		return nil, fmt.Errorf("s3 store: read %s: %w: the pack is shorter than the %d bytes its index says", r.name, cas.ErrCorrupt, r.size)
	} else if err != nil {
		return nil, r.s.wrap(ctx, "read", r.name, err)
	}
	defer body.Close()
	if total, ok := rangeTotal(header.Get("Content-Range")); ok && total != r.size {
		return nil, fmt.Errorf("s3 store: read %s: %w: the pack is %d bytes, not the %d its index says", r.name, cas.ErrCorrupt, total, r.size)
	}
	buf := make([]byte, end-start)
	if _, err := io.ReadFull(body, buf); err != nil {
		return nil, r.s.wrap(ctx, "read", r.name, err)
	}
	var blocks [][]byte
	for n := lo; n <= hi; n++ {
		b := buf[(n-lo)*blockSize : min((n-lo+1)*blockSize, int64(len(buf)))]
		r.s.blocks.put(blockKey{r.key, r.etag, n}, b)
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// rangeTotal returns the size of the whole object that a Content-Range
// header ("bytes 0-99/1000") gives, if it gives one.
func rangeTotal(contentRange string) (int64, bool) {
	_, total, ok := strings.Cut(contentRange, "/")
	n, err := strconv.ParseInt(total, 10, 64)
	return n, ok && err == nil
}

// errEnded: Write or Close after the writer closed or aborted.
var errEnded = errors.New("s3 store: the pack writer has already ended")

// errClosed: ReadAt after Close.
var errClosed = errors.New("s3 store: the pack reader is closed")
