package s3store

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"

	"github.com/minio/minio-go/v7"
)

// maxUploads is how many packs a store sends at once. A first snapshot
// fills packs faster than one PUT after the other carries them (a PUT
// waits a round trip, then the server's write), so a few at once keep the
// link busy; each waits in memory (up to cas.PackTargetSize, 8 MiB), so
// 4, plus the pack the writer fills, keep a snapshot's packs under 45 MiB
// of the command's 96 MiB soft limit. A writer whose Close finds them all
// in flight waits for one to end.
const maxUploads = 4

// segmentSize is the size of the pieces a writer keeps its pack in: a pack
// grows without copying, and wastes at most one piece's slack.
const segmentSize = 1 << 20

// uploads are the packs a store is sending: writers' Close starts them,
// Sync waits for them.
type uploads struct {
	slots chan struct{} // holds one token per upload in flight

	mu   sync.Mutex
	busy map[string]chan struct{} // pack name: closed when its upload has ended
	// err is the first failure that no Close, Sync or SyncPacks has
	// returned yet, of pack errPack; failed holds every failure by pack
	// until a Sync or the SyncPacks of its writer returns it.
	err     error
	errPack string
	failed  map[string]error
}

// maxFailed bounds uploads.failed: past it a failure that no writer asked
// for is dropped (its writer's commit, which checks every pack, still
// fails).
const maxFailed = 1024

func newUploads() *uploads {
	return &uploads{slots: make(chan struct{}, maxUploads), busy: map[string]chan struct{}{}, failed: map[string]error{}}
}

// start sends data as pack name (key) in the background, once fewer than
// maxUploads are in flight. It fails, sending nothing, when a pack of that
// name is being sent, or with the failure of an earlier upload that no
// Close or Sync has returned yet: a server that is down stops the writer
// at its next pack instead of failing every pack in turn.
func (s *Store) startUpload(ctx context.Context, name, key string, data *segments) error {
	u := s.uploads
	u.mu.Lock()
	if err := u.err; err != nil {
		u.err, u.errPack = nil, ""
		u.mu.Unlock()
		return err
	}
	if _, busy := u.busy[name]; busy {
		u.mu.Unlock()
		return fmt.Errorf("s3 store: close %s: %w (this store is writing a pack of that name)", name, fs.ErrExist)
	}
	done := make(chan struct{})
	u.busy[name] = done
	u.mu.Unlock()
	u.slots <- struct{}{}
	go func() {
		err := s.putPack(ctx, name, key, data)
		<-u.slots
		u.mu.Lock()
		delete(u.busy, name)
		if err != nil {
			if u.err == nil {
				u.err, u.errPack = err, name
			}
			if len(u.failed) >= maxFailed {
				for k := range u.failed {
					delete(u.failed, k)
					break
				}
			}
			u.failed[name] = err
		}
		u.mu.Unlock()
		close(done)
	}()
	return nil
}

// putPack puts pack name with one conditional PUT. On a 412 it asks
// whether the object stored is this very pack (a PUT that minio-go
// retried after its first try had landed) and takes it as done if so.
func (s *Store) putPack(ctx context.Context, name, key string, data *segments) error {
	ctx, w := s.watch(ctx)
	defer w.stop()
	opts := s.putOptions()
	opts.SetMatchETagExcept("*")
	if s.progress != nil {
		opts.Progress = &progressHook{size: data.size, report: s.progress}
	}
	err := s.putObject(ctx, key, func() io.Reader { return data.reader() }, data.size, opts)
	if err == nil || (isPreconditionFailed(err) && s.holdsPack(ctx, key, data)) {
		return nil
	}
	return s.wrap(ctx, "upload", name, err)
}

// holdsPack reports whether the object under key is data, as its size and
// ETag (the MD5 of an object put whole) say.
func (s *Store) holdsPack(ctx context.Context, key string, data *segments) bool {
	sum := md5.New()
	io.Copy(sum, data.reader()) // reads memory: never fails
	info, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	return err == nil && info.Size == data.size && strings.EqualFold(strings.Trim(info.ETag, `"`), hex.EncodeToString(sum.Sum(nil)))
}

// waitUpload waits until the upload of pack name, if one is in flight,
// has ended, so that this store's callers see a pack as soon as its
// writer's Close returned nil.
func (s *Store) waitUpload(ctx context.Context, name string) error {
	s.uploads.mu.Lock()
	done := s.uploads.busy[name]
	s.uploads.mu.Unlock()
	if done == nil {
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// waitUploads waits until every upload in flight when it was called has
// ended.
func (s *Store) waitUploads(ctx context.Context) error {
	s.uploads.mu.Lock()
	pending := make([]chan struct{}, 0, len(s.uploads.busy))
	for _, done := range s.uploads.busy {
		pending = append(pending, done)
	}
	s.uploads.mu.Unlock()
	for _, done := range pending {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return ctx.Err()
}

// Sync waits until every pack whose writer's Close returned nil before it
// was called is stored, and returns the first failure among the uploads
// that no Close or Sync has returned yet (the failed packs are not
// stored). A request that returned is durable: Sync sends nothing.
func (s *Store) Sync(ctx context.Context) error {
	if err := s.waitUploads(ctx); err != nil {
		return err
	}
	u := s.uploads
	u.mu.Lock()
	defer u.mu.Unlock()
	err := u.err
	u.err, u.errPack = nil, ""
	clear(u.failed)
	return err
}

// SyncPacks is Sync for packs names only (cas.PackSyncer): it waits for
// their uploads and returns the first failure among them, so that a
// writer never fails on, nor misses, a failure because another writer of
// this store synced.
func (s *Store) SyncPacks(ctx context.Context, names []string) error {
	for _, name := range names {
		if err := s.waitUpload(ctx, name); err != nil {
			return err
		}
	}
	u := s.uploads
	u.mu.Lock()
	defer u.mu.Unlock()
	var first error
	for _, name := range names {
		if err, ok := u.failed[name]; ok {
			if first == nil {
				first = err
			}
			delete(u.failed, name)
			if name == u.errPack {
				u.err, u.errPack = nil, ""
			}
		}
	}
	return first
}

// segments are a pack's bytes in memory, in pieces of segmentSize (the
// first one grows to it): a writer's buffer and, once closed, the body of
// its PUT.
type segments struct {
	segs [][]byte
	size int64
}

func (b *segments) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if len(b.segs) == 0 || len(b.segs[len(b.segs)-1]) == segmentSize {
			var seg []byte
			if len(b.segs) > 0 {
				seg = make([]byte, 0, segmentSize)
			}
			b.segs = append(b.segs, seg)
		}
		last := &b.segs[len(b.segs)-1]
		k := min(len(p), segmentSize-len(*last))
		*last = append(*last, p[:k]...)
		p = p[k:]
		b.size += int64(k)
	}
	return n, nil
}

// ReadAt reads the bytes at off, as io.ReaderAt does.
func (b *segments) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("s3 store: read a pack in memory at offset %d: negative offset", off)
	}
	n := 0
	for n < len(p) && off < b.size {
		seg := b.segs[off/segmentSize]
		k := copy(p[n:], seg[off%segmentSize:])
		n += k
		off += int64(k)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// reader returns a reader of the whole pack that can seek (minio-go reads
// it twice: for the MD5, then to send it, and again on a retry).
func (b *segments) reader() *io.SectionReader { return io.NewSectionReader(b, 0, b.size) }

// progressHook is the Progress reader of a pack's PUT: minio-go reads from
// it what it has read of the body, and seeks it with the body. It reports
// each byte once, the first time the body is read past it, so a retried
// PUT adds nothing and a pack's reports add up to its size.
type progressHook struct {
	size, pos, high int64
	report          func(int64)
}

func (h *progressHook) Read(p []byte) (int, error) {
	h.pos += int64(len(p))
	if h.pos > h.high {
		h.report(h.pos - h.high)
		h.high = h.pos
	}
	return len(p), nil
}

func (h *progressHook) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
		h.pos = off
	case io.SeekCurrent:
		h.pos += off
	case io.SeekEnd:
		h.pos = h.size + off
	}
	return h.pos, nil
}
