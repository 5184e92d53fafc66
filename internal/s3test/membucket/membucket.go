// Package membucket is a bucket of an S3-compatible server in memory, for
// tests: a Bucket has the methods of cas/s3store.Store that a store in a
// bucket uses (the cas.PackStore of its packs, and the small objects
// beside them), with their conditional writes, and a server clock the
// test sets. Last-Modified is that clock's time at the write, so a test of
// gc's grace period or horizon advances the clock instead of sleeping.
//
// Caveats:
//   - It checks what the real server checks of keys (none reaches packs/
//     from the object methods), not the network: no request fails, times
//     out or is retried. Tests of those run against versitygw
//     (internal/s3test).
//   - ETags are the hex MD5 of the object, as S3's of a single PUT.
package membucket

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/s3store"
)

// packsDir and damagedDir are where packs and packs set aside live, as in
// cas/s3store.
const (
	packsDir   = "packs/"
	damagedDir = "damaged/"
)

// Bucket is an in-memory bucket. It is safe for concurrent use.
type Bucket struct {
	mu      sync.Mutex
	calls   int // calls left before every one fails; < 0: no limit
	now     time.Time
	objects map[string]object // by key: "packs/<name>", "damaged/<name>", or an object's key
	writing map[string]bool   // pack names being written
}

// object is a stored object.
type object struct {
	data     []byte
	etag     string
	modified time.Time
}

var (
	_ cas.PackStore   = (*Bucket)(nil)
	_ cas.SizedOpener = (*Bucket)(nil)
	_ cas.PackSyncer  = (*Bucket)(nil)
)

// New returns an empty bucket whose server clock reads now.
func New(now time.Time) *Bucket {
	return &Bucket{calls: -1, now: now, objects: map[string]object{}, writing: map[string]bool{}}
}

// errCut is the error of a call after the limit of FailAfter.
var errCut = errors.New("membucket: connection cut by the test")

// FailAfter lets the next n calls of the bucket's methods through and
// fails every later one, as a cut network would; n < 0 lifts the limit.
func (b *Bucket) FailAfter(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = n
}

// call counts a call against the limit of FailAfter, and returns errCut
// past it.
func (b *Bucket) call() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.calls < 0 {
		return nil
	}
	if b.calls == 0 {
		return errCut
	}
	b.calls--
	return nil
}

// Now returns the time of the server's clock.
func (b *Bucket) Now() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.now
}

// Advance moves the server's clock on by d.
func (b *Bucket) Advance(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.now = b.now.Add(d)
}

// Keys returns the keys stored under prefix, in order: packs are under
// "packs/".
func (b *Bucket) Keys(prefix string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for k := range b.objects {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// store puts data under key; the caller holds b.mu.
func (b *Bucket) store(key string, data []byte) {
	sum := md5.Sum(data)
	b.objects[key] = object{data: slices.Clone(data), etag: hex.EncodeToString(sum[:]), modified: b.now}
}

// objectKey checks that rel is a key the object methods may touch, and
// counts the call (see FailAfter).
func (b *Bucket) objectKey(op, rel string) error {
	if err := b.call(); err != nil {
		return err
	}
	if rel == "" || strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, packsDir) || strings.HasPrefix(rel, damagedDir) ||
		slices.Contains(strings.Split(rel, "/"), "..") {
		return fmt.Errorf("membucket: %s %q: not a key outside packs/", op, rel)
	}
	return nil
}

// PutNew stores data under rel unless an object is stored there (then an
// error matching fs.ErrExist), as s3store.Store.PutNew.
func (b *Bucket) PutNew(_ context.Context, rel string, data []byte) error {
	if err := b.objectKey("put", rel); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if o, ok := b.objects[rel]; ok {
		if bytes.Equal(o.data, data) {
			return nil // as a retried PUT of its own
		}
		return fmt.Errorf("membucket: put %s: %w", rel, fs.ErrExist)
	}
	b.store(rel, data)
	return nil
}

// PutIfMatch replaces the object under rel if its ETag is etag, as
// s3store.Store.PutIfMatch.
func (b *Bucket) PutIfMatch(_ context.Context, rel, etag string, data []byte) error {
	if err := b.objectKey("put", rel); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	o, ok := b.objects[rel]
	if !ok {
		return fmt.Errorf("membucket: put %s: %w", rel, fs.ErrNotExist)
	}
	if o.etag != etag {
		return fmt.Errorf("membucket: put %s: %w", rel, fs.ErrExist)
	}
	b.store(rel, data)
	return nil
}

// Get returns the object under rel, as s3store.Store.Get.
func (b *Bucket) Get(_ context.Context, rel string, limit int64) ([]byte, error) {
	if err := b.objectKey("get", rel); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	o, ok := b.objects[rel]
	if !ok {
		return nil, fmt.Errorf("membucket: get %s: %w", rel, fs.ErrNotExist)
	}
	if int64(len(o.data)) > limit {
		return nil, fmt.Errorf("membucket: get %s: %w: %d bytes, more than the %d it may hold", rel, s3store.ErrTooLarge, len(o.data), limit)
	}
	return slices.Clone(o.data), nil
}

// Head returns what a listing tells of the object under rel, as
// s3store.Store.Head.
func (b *Bucket) Head(_ context.Context, rel string) (s3store.ObjectInfo, error) {
	if err := b.objectKey("head", rel); err != nil {
		return s3store.ObjectInfo{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	o, ok := b.objects[rel]
	if !ok {
		return s3store.ObjectInfo{}, fmt.Errorf("membucket: head %s: %w", rel, fs.ErrNotExist)
	}
	return info(rel, o), nil
}

// info is what a listing tells of object o under key.
func info(key string, o object) s3store.ObjectInfo {
	return s3store.ObjectInfo{Key: key, ETag: o.etag, Size: int64(len(o.data)), LastModified: o.modified}
}

// Delete removes the object under rel; a missing one is no error.
func (b *Bucket) Delete(_ context.Context, rel string) error {
	if err := b.objectKey("delete", rel); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.objects, rel)
	return nil
}

// ListAfter calls fn with the keys under dir after startAfter, in order,
// as s3store.Store.ListAfter.
func (b *Bucket) ListAfter(ctx context.Context, dir, startAfter string, fn func(rel string) error) error {
	return b.ListInfo(ctx, dir, startAfter, func(o s3store.ObjectInfo) error { return fn(o.Key) })
}

// ListInfo is ListAfter with what a listing tells of each object. fn
// runs without the bucket's lock, on a snapshot of the listing.
func (b *Bucket) ListInfo(_ context.Context, dir, startAfter string, fn func(s3store.ObjectInfo) error) error {
	if err := b.objectKey("list", dir); err != nil {
		return err
	}
	b.mu.Lock()
	var list []s3store.ObjectInfo
	for k, o := range b.objects {
		if strings.HasPrefix(k, dir) && k > startAfter {
			list = append(list, info(k, o))
		}
	}
	b.mu.Unlock()
	slices.SortFunc(list, func(x, y s3store.ObjectInfo) int { return strings.Compare(x.Key, y.Key) })
	for _, o := range list {
		if err := fn(o); err != nil {
			return err
		}
	}
	return nil
}

// packKey returns the key of pack name, or an error when ctx is done or
// name is not a pack's; it counts the call (see FailAfter).
func (b *Bucket) packKey(ctx context.Context, op, name string) (string, error) {
	if err := b.call(); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("membucket: %s %s: %w", op, name, err)
	}
	if _, ok := cas.PackName(name); !ok {
		return "", fmt.Errorf("membucket: %s %q: not a pack name", op, name)
	}
	return packsDir + name, nil
}

// pack returns the bytes of pack name, or an error matching
// fs.ErrNotExist.
func (b *Bucket) pack(ctx context.Context, op, name string) ([]byte, error) {
	if _, err := b.packKey(ctx, op, name); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	o, ok := b.objects[packsDir+name]
	if !ok {
		return nil, fmt.Errorf("membucket: %s %s: %w", op, name, fs.ErrNotExist)
	}
	return o.data, nil
}

// ReadTail returns the last n bytes of pack name, whose size is size, as
// s3store.Store.ReadTail.
func (b *Bucket) ReadTail(ctx context.Context, name string, size, n int64) ([]byte, error) {
	data, err := b.pack(ctx, "read", name)
	if err != nil {
		return nil, err
	}
	n = min(n, size)
	if n <= 0 {
		return nil, fmt.Errorf("membucket: read %s: empty range", name)
	}
	if int64(len(data)) != size {
		return nil, fmt.Errorf("membucket: read %s: %w: %d bytes, not the %d its commit says", name, cas.ErrBadPack, len(data), size)
	}
	return slices.Clone(data[size-n:]), nil
}

// RemovePack deletes pack name; a missing one is no error.
func (b *Bucket) RemovePack(ctx context.Context, name string) error {
	key, err := b.packKey(ctx, "remove", name)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.objects, key)
	return nil
}

// Create starts pack name; see cas.PackStore.
func (b *Bucket) Create(ctx context.Context, name string) (cas.PackWriter, error) {
	key, err := b.packKey(ctx, "create", name)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.objects[key]; ok || b.writing[name] {
		return nil, fmt.Errorf("membucket: create %s: %w", name, fs.ErrExist)
	}
	b.writing[name] = true
	return &writer{b: b, name: name}, nil
}

// Sync does nothing but check ctx: a closed pack is stored.
func (b *Bucket) Sync(ctx context.Context) error { return ctx.Err() }

// SyncPacks does nothing: a closed pack is stored.
func (b *Bucket) SyncPacks(context.Context, []string) error { return nil }

// Open opens pack name; see cas.PackStore.
func (b *Bucket) Open(ctx context.Context, name string) (cas.PackReader, error) {
	data, err := b.pack(ctx, "open", name)
	if err != nil {
		return nil, err
	}
	return &reader{r: bytes.NewReader(data)}, nil
}

// OpenSized opens pack name, whose size the caller knows; a missing pack
// fails the reads; see cas.SizedOpener.
func (b *Bucket) OpenSized(ctx context.Context, name string, size int64) (cas.PackReader, error) {
	data, err := b.pack(ctx, "open", name)
	if errors.Is(err, fs.ErrNotExist) {
		return &reader{r: bytes.NewReader(nil), size: size, missing: err}, nil
	}
	if err != nil {
		return nil, err
	}
	return &reader{r: bytes.NewReader(data)}, nil
}

// Stat returns the size of pack name.
func (b *Bucket) Stat(ctx context.Context, name string) (cas.StoredPack, error) {
	data, err := b.pack(ctx, "stat", name)
	if err != nil {
		return cas.StoredPack{}, err
	}
	return cas.StoredPack{Name: name, Size: int64(len(data))}, nil
}

// List calls fn with every pack stored, in name order.
func (b *Bucket) List(ctx context.Context, fn func(cas.StoredPack) error) error {
	if err := b.call(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("membucket: list: %w", err)
	}
	b.mu.Lock()
	var packs []cas.StoredPack
	for k, o := range b.objects {
		if name, ok := strings.CutPrefix(k, packsDir); ok {
			packs = append(packs, cas.StoredPack{Name: name, Size: int64(len(o.data))})
		}
	}
	b.mu.Unlock()
	slices.SortFunc(packs, func(x, y cas.StoredPack) int { return strings.Compare(x.Name, y.Name) })
	for _, p := range packs {
		if err := fn(p); err != nil {
			return err
		}
	}
	return nil
}

// Remove deletes pack name.
func (b *Bucket) Remove(ctx context.Context, name string) error {
	key, err := b.packKey(ctx, "remove", name)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.objects[key]; !ok {
		return fmt.Errorf("membucket: remove %s: %w", name, fs.ErrNotExist)
	}
	delete(b.objects, key)
	return nil
}

// SetAside moves pack name to damaged/.
func (b *Bucket) SetAside(ctx context.Context, name string) error {
	key, err := b.packKey(ctx, "set aside", name)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	o, ok := b.objects[key]
	if !ok {
		return fmt.Errorf("membucket: set aside %s: %w", name, fs.ErrNotExist)
	}
	b.objects[damagedDir+name] = o
	delete(b.objects, key)
	return nil
}

// RemoveIncomplete returns 0: its writers leave nothing behind.
func (b *Bucket) RemoveIncomplete(ctx context.Context) (int64, error) { return 0, ctx.Err() }

// writer is a pack being written.
type writer struct {
	b    *Bucket
	name string
	buf  bytes.Buffer
	done bool
}

// Write appends to the pack.
func (w *writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, fmt.Errorf("membucket: write %s: the writer is closed", w.name)
	}
	return w.buf.Write(p)
}

// Close stores the pack.
func (w *writer) Close() error {
	if w.done {
		return fmt.Errorf("membucket: close %s: the writer is closed", w.name)
	}
	w.done = true
	w.b.mu.Lock()
	defer w.b.mu.Unlock()
	delete(w.b.writing, w.name)
	w.b.store(packsDir+w.name, w.buf.Bytes())
	return nil
}

// Abort drops the pack.
func (w *writer) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.b.mu.Lock()
	defer w.b.mu.Unlock()
	delete(w.b.writing, w.name)
	return nil
}

// reader reads a stored pack; one of OpenSized whose pack is missing
// fails every read with missing.
type reader struct {
	mu      sync.Mutex
	r       *bytes.Reader
	size    int64 // when missing
	missing error
	closed  bool
}

// ReadAt reads from the pack.
func (r *reader) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return 0, fmt.Errorf("membucket: read: %w", fs.ErrClosed)
	}
	if r.missing != nil {
		return 0, r.missing
	}
	return r.r.ReadAt(p, off)
}

// Size is the pack's length.
func (r *reader) Size() int64 {
	if r.missing != nil {
		return r.size
	}
	return r.r.Size()
}

// Close releases the reader.
func (r *reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	return nil
}

var _ io.ReaderAt = (*reader)(nil)
