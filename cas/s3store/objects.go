package s3store

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/minio/minio-go/v7"
)

// The small objects of a store beside its packs (commits, markers) are
// reached through the methods below, by keys relative to the prefix. They
// never reach packs/ or damaged/, which only the cas.PackStore methods
// touch.

// objectKey returns the full key of relative key rel, or an error if rel
// is not a key these methods may touch.
func (s *Store) objectKey(op, rel string) (string, error) {
	if rel == "" || strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, packsDir) || strings.HasPrefix(rel, damagedDir) ||
		slices.Contains(strings.Split(rel, "/"), "..") {
		return "", fmt.Errorf("s3 store: %s %q: not a key outside packs/", op, rel)
	}
	return s.prefix + rel, nil
}

// PutNew stores data under key rel with one conditional PUT. It fails with
// an error matching fs.ErrExist when an object of that key is stored
// (unless it holds data: a PUT of its own that minio-go retried).
func (s *Store) PutNew(ctx context.Context, rel string, data []byte) error {
	key, err := s.objectKey("put", rel)
	if err != nil {
		return err
	}
	ctx, w := s.watch(ctx)
	defer w.stop()
	err = s.put(ctx, key, data)
	if err == nil || (isPreconditionFailed(err) && s.holds(ctx, key, data)) {
		return nil
	}
	return s.wrap(ctx, "put", rel, err)
}

// Get returns the object under key rel (one GET). A missing one is an
// error matching fs.ErrNotExist; one larger than limit bytes an error
// matching ErrTooLarge, found from the answer's size before its body is
// read (and, from a server that does not tell the size, once limit+1
// bytes are read).
func (s *Store) Get(ctx context.Context, rel string, limit int64) ([]byte, error) {
	key, err := s.objectKey("get", rel)
	if err != nil {
		return nil, err
	}
	ctx, w := s.watch(ctx)
	defer w.stop()
	body, info, _, err := s.core.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, s.wrap(ctx, "get", rel, err)
	}
	defer body.Close()
	if info.Size > limit {
		return nil, fmt.Errorf("s3 store: get %s: %w: %d bytes, more than the %d it may hold", rel, ErrTooLarge, info.Size, limit)
	}
	b, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err != nil {
		return nil, s.wrap(ctx, "get", rel, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("s3 store: get %s: %w: more than the %d bytes it may hold", rel, ErrTooLarge, limit)
	}
	return b, nil
}

// Delete removes the object under key rel; a missing one is no error
// (one DELETE).
func (s *Store) Delete(ctx context.Context, rel string) error {
	key, err := s.objectKey("delete", rel)
	if err != nil {
		return err
	}
	return s.remove(ctx, "delete", rel, key)
}

// remove deletes key with one DELETE; a missing one is no error (AWS
// answers 204, some servers, versitygw among them, 404: another gc or
// machine deleted it first). op and what name it in an error.
func (s *Store) remove(ctx context.Context, op, what, key string) error {
	ctx, w := s.watch(ctx)
	defer w.stop()
	err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{})
	if err == nil || errorResponse(err).StatusCode == http.StatusNotFound {
		return nil
	}
	return s.wrap(ctx, op, what, err)
}

// ListAfter calls fn, in key order, with the key (relative to the prefix)
// of every object under folder dir (ending in "/") that sorts after
// startAfter (a relative key; "" lists all): one request per 1000 keys.
func (s *Store) ListAfter(ctx context.Context, dir, startAfter string, fn func(rel string) error) error {
	return s.ListInfo(ctx, dir, startAfter, func(o ObjectInfo) error { return fn(o.Key) })
}

// ReadTail returns the last n bytes of pack name (all of it when it is
// shorter), whose size is size, with one ranged GET. A pack of another
// size makes an error matching cas.ErrBadPack.
func (s *Store) ReadTail(ctx context.Context, name string, size, n int64) ([]byte, error) {
	key, err := s.packKey("read", name)
	if err != nil {
		return nil, err
	}
	n = min(n, size)
	if n <= 0 {
		return nil, fmt.Errorf("s3 store: read %s: empty range", name)
	}
	ctx, w := s.watch(ctx)
	defer w.stop()
	opts := minio.GetObjectOptions{}
	if err := opts.SetRange(size-n, size-1); err != nil {
		return nil, fmt.Errorf("s3 store: read %s: %v", name, err)
	}
	body, info, _, err := s.core.GetObject(ctx, s.bucket, key, opts)
	if errorResponse(err).StatusCode == http.StatusRequestedRangeNotSatisfiable {
		return nil, fmt.Errorf("s3 store: read %s: %w: it is shorter than the %d bytes its commit says", name, cas.ErrBadPack, size)
	} else if err != nil {
		return nil, s.wrap(ctx, "read", name, err)
	}
	defer body.Close()
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, io.LimitReader(body, n+1)); err != nil {
		return nil, s.wrap(ctx, "read", name, err)
	}
	if int64(buf.Len()) != n {
		return nil, fmt.Errorf("s3 store: read %s: %w: got %d bytes of %d (object of %d bytes): it is not the size its commit says", name, cas.ErrBadPack, buf.Len(), n, info.Size)
	}
	return buf.Bytes(), nil
}

// ObjectInfo is what a listing or a HEAD tells of an object beside the
// packs: its key (relative to the prefix), its ETag, its size, and when
// the server stored it, by the server's clock.
type ObjectInfo struct {
	Key          string
	ETag         string
	Size         int64
	LastModified time.Time
}

// ListInfo is ListAfter with each object's ETag, size and Last-Modified.
func (s *Store) ListInfo(ctx context.Context, dir, startAfter string, fn func(ObjectInfo) error) error {
	full, err := s.objectKey("list", dir)
	if err != nil {
		return err
	}
	ctx, w := s.watch(ctx)
	defer w.stop()
	opts := minio.ListObjectsOptions{Prefix: full, Recursive: true}
	if startAfter != "" {
		opts.StartAfter = s.prefix + startAfter
	}
	for obj := range s.client.ListObjects(ctx, s.bucket, opts) {
		if obj.Err != nil {
			return s.wrap(ctx, "list", dir, obj.Err)
		}
		w.pause()
		err := fn(ObjectInfo{Key: strings.TrimPrefix(obj.Key, s.prefix), ETag: obj.ETag, Size: obj.Size, LastModified: obj.LastModified})
		w.resume()
		if err != nil {
			return err
		}
	}
	return nil
}

// Head returns the ETag and Last-Modified of the object under key rel (one
// HEAD); a missing one is an error matching fs.ErrNotExist.
func (s *Store) Head(ctx context.Context, rel string) (ObjectInfo, error) {
	key, err := s.objectKey("head", rel)
	if err != nil {
		return ObjectInfo{}, err
	}
	ctx, w := s.watch(ctx)
	defer w.stop()
	info, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return ObjectInfo{}, s.wrap(ctx, "head", rel, err)
	}
	return ObjectInfo{Key: rel, ETag: info.ETag, Size: info.Size, LastModified: info.LastModified}, nil
}

// PutIfMatch replaces the object under key rel with data only if its ETag
// is still etag (one PUT with If-Match): the renewal of a lease. A server
// that refuses, because another writer replaced or deleted the object
// first, makes it fail with an error matching fs.ErrExist (a changed
// object) or fs.ErrNotExist (a deleted one).
func (s *Store) PutIfMatch(ctx context.Context, rel, etag string, data []byte) error {
	key, err := s.objectKey("put", rel)
	if err != nil {
		return err
	}
	ctx, w := s.watch(ctx)
	defer w.stop()
	opts := s.putOptions()
	opts.SetMatchETag(etag)
	_, err = s.client.PutObject(ctx, s.bucket, key, bytes.NewReader(data), int64(len(data)), opts)
	if err != nil {
		return s.wrap(ctx, "put", rel, err)
	}
	return nil
}

// RemovePack deletes pack name with one DELETE; a missing one is no error.
// Only the two-phase gc of a store in a bucket calls it.
func (s *Store) RemovePack(ctx context.Context, name string) error {
	key, err := s.packKey("remove", name)
	if err != nil {
		return err
	}
	return s.remove(ctx, "remove", name, key)
}
