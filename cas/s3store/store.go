package s3store

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Folders under the prefix.
const (
	packsDir   = "packs/"
	damagedDir = "damaged/"
)

// defaultStaleAge is how old a multipart upload must be for
// RemoveIncomplete to abort it: older than any writer still at work.
const defaultStaleAge = 24 * time.Hour

// Store is a cas.PackStore in a bucket of an S3-compatible server. It is
// safe for concurrent use.
type Store struct {
	client   *minio.Client
	core     minio.Core
	bucket   string
	prefix   string // "" or ending in "/"
	endpoint string // for messages
	staleAge time.Duration
	blocks   *blockCache   // of pack reads
	uploads  *uploads      // of packs closed
	progress func(int64)   // Config.Progress
	secure   bool          // Config.Secure
	timeout  time.Duration // Config.Timeout
}

var (
	_ cas.PackStore   = (*Store)(nil)
	_ cas.SizedOpener = (*Store)(nil)
	_ cas.PackSyncer  = (*Store)(nil)
)

// New opens the store c names and probes its server: it puts one probe
// object twice with If-None-Match: * and refuses a server that lets the
// second put through, since casckpt relies on conditional writes to keep
// many writers safe (unless c.Probed says a former New did). New creates neither the bucket nor anything else that
// outlives it.
func New(ctx context.Context, c Config) (*Store, error) {
	if c.Bucket == "" || c.Endpoint == "" {
		return nil, fmt.Errorf("s3 store: no bucket or no endpoint given: write the store as s3://BUCKET[/PREFIX]")
	}
	transport := c.Transport
	if transport == nil {
		t, err := minio.DefaultTransport(c.Secure)
		if err != nil {
			return nil, fmt.Errorf("s3 store: endpoint %q: %v: check AWS_ENDPOINT_URL", c.Endpoint, err)
		}
		transport = t
	}
	client, err := minio.New(c.Endpoint, &minio.Options{
		Creds:      credentials.NewStaticV4(c.AccessKey, c.SecretKey, c.SessionToken),
		Secure:     c.Secure,
		Region:     c.Region,
		Transport:  watchedTransport{transport},
		MaxRetries: c.MaxRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("s3 store: endpoint %q: %v: check AWS_ENDPOINT_URL", c.Endpoint, err)
	}
	s := &Store{
		client:   client,
		core:     minio.Core{Client: client},
		bucket:   c.Bucket,
		endpoint: c.Endpoint,
		staleAge: defaultStaleAge,
		blocks:   newBlockCache(),
		uploads:  newUploads(),
		progress: c.Progress,
		secure:   c.Secure,
		timeout:  c.Timeout,
	}
	if s.timeout <= 0 {
		s.timeout = defaultTimeout
	}
	if c.Prefix != "" {
		s.prefix = strings.Trim(c.Prefix, "/") + "/"
	}
	if c.Probed {
		return s, nil
	}
	if err := s.probe(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// probe checks that the server refuses a conditional put over an object,
// and deletes its probe object.
func (s *Store) probe(ctx context.Context) error {
	ctx, w := s.watch(ctx)
	defer w.stop()
	var id [8]byte
	rand.Read(id[:]) // never fails (crypto/rand)
	key := s.prefix + "probe-" + hex.EncodeToString(id[:])
	data := []byte("casckpt checks that this server honours If-None-Match: *\n")
	if err := s.put(ctx, key, data); err != nil {
		return s.wrap(ctx, "probe: put", key, err)
	}
	second := s.put(ctx, key, data)
	removed := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{})
	switch status := errorResponse(second).StatusCode; {
	case second == nil || status == 501:
		return fmt.Errorf("s3 store: the server at %s ignores conditional writes (If-None-Match: *), and casckpt needs them to keep many writers safe: use a server that supports them", s.endpoint)
	case !isPreconditionFailed(second):
		return s.wrap(ctx, "probe: second put", key, second)
	case removed != nil:
		return s.wrap(ctx, "probe: delete", key, removed)
	}
	return nil
}

// put stores data under key with a conditional PUT (If-None-Match: *),
// which the server refuses with 412 if key exists.
func (s *Store) put(ctx context.Context, key string, data []byte) error {
	opts := s.putOptions()
	opts.SetMatchETagExcept("*")
	return s.putObject(ctx, key, func() io.Reader { return bytes.NewReader(data) }, int64(len(data)), opts)
}

// conflictRetries is how many times a conditional PUT is sent again after
// the server answered 409 for a reason other than its condition: AWS's
// OperationAborted ("a conflicting conditional operation is currently in
// progress against this resource"), or versitygw's posix back end, whose
// PUT answers ExistingObjectIsDirectory when a DELETE of the last object
// under the same prefix removed the prefix's directory under it
// (versitygw#1988; seen with v1.8.0 while gc deleted packs). Every try
// carries the same bytes and the same If-None-Match: *, so a try that
// did land makes the next one fail its condition, never store twice.
const conflictRetries = 3

// putObject PUTs size bytes, read from a new body() for each try, under
// key with opts, and tries again after a transient conflict
// (conflictRetries).
func (s *Store) putObject(ctx context.Context, key string, body func() io.Reader, size int64, opts minio.PutObjectOptions) error {
	for try := 0; ; try++ {
		if seeker, ok := opts.Progress.(io.Seeker); ok {
			seeker.Seek(0, io.SeekStart) // a try again reports no bytes twice
		}
		_, err := s.client.PutObject(ctx, s.bucket, key, body(), size, opts)
		if err == nil || try == conflictRetries || !isTransientConflict(err) {
			return err
		}
		select {
		case <-time.After(time.Duration(try+1) * 50 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// putOptions are the options of every PUT: one request, never multipart,
// with the body checked by the server. Over http minio-go signs the
// body's SHA-256 chunk by chunk (streaming SigV4), which the server
// checks, so a Content-MD5 would only hash every byte a second time
// (about 50 ms of a 30 MiB first snapshot); over https the body is sent
// unsigned and its Content-MD5 is what lets the server refuse a body
// damaged on the way.
func (s *Store) putOptions() minio.PutObjectOptions {
	return minio.PutObjectOptions{
		ContentType:      "application/octet-stream",
		DisableMultipart: true,
		SendContentMd5:   s.secure,
	}
}

// holds reports whether the object under key is data, as its size and
// ETag (the MD5 of an object put whole) say.
func (s *Store) holds(ctx context.Context, key string, data []byte) bool {
	info, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	sum := md5.Sum(data)
	return err == nil && info.Size == int64(len(data)) && strings.EqualFold(strings.Trim(info.ETag, `"`), hex.EncodeToString(sum[:]))
}

// packKey returns the key of pack name, or an error if name is not a pack
// name.
func (s *Store) packKey(op, name string) (string, error) {
	if _, ok := cas.PackName(name); !ok {
		return "", fmt.Errorf("s3 store: %s %q: not a pack name", op, name)
	}
	return s.prefix + packsDir + name, nil
}

// Create starts pack name, kept in memory until the writer's Close hands
// it to the uploads. It makes no request: a pack stored under name makes
// Close or Sync fail.
func (s *Store) Create(ctx context.Context, name string) (cas.PackWriter, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	key, err := s.packKey("create", name)
	if err != nil {
		return nil, err
	}
	return &writer{s: s, ctx: context.WithoutCancel(ctx), name: name, key: key, buf: &segments{}}, nil
}

// Open returns a reader of pack name, whose size a HEAD tells (once its
// upload, if one is in flight, has ended; Stat, Remove and SetAside wait
// too, and List for every upload).
func (s *Store) Open(ctx context.Context, name string) (cas.PackReader, error) {
	key, err := s.openKey(ctx, name)
	if err != nil {
		return nil, err
	}
	ctx, w := s.watch(ctx)
	defer w.stop()
	info, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return nil, s.wrap(ctx, "open", name, err)
	}
	return &reader{s: s, name: name, key: key, etag: info.ETag, size: info.Size}, nil
}

// OpenSized is Open of a pack whose size the caller knows (cas.Store
// reads it from its index): it makes no request. Its reads are not bound
// to an ETag as Open's are: a pack is never overwritten (it is put once,
// conditionally, under a random name), so none can change under them; one
// deleted since fails them with fs.ErrNotExist.
func (s *Store) OpenSized(ctx context.Context, name string, size int64) (cas.PackReader, error) {
	key, err := s.openKey(ctx, name)
	if err != nil {
		return nil, err
	}
	return &reader{s: s, name: name, key: key, size: size}, nil
}

// openKey returns the key of pack name for a reader, once an upload of it
// under way has ended.
func (s *Store) openKey(ctx context.Context, name string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	key, err := s.packKey("open", name)
	if err != nil {
		return "", err
	}
	return key, s.waitUpload(ctx, name)
}

// Stat returns the size of pack name (a HEAD).
func (s *Store) Stat(ctx context.Context, name string) (cas.StoredPack, error) {
	if err := ctx.Err(); err != nil {
		return cas.StoredPack{}, err
	}
	key, err := s.packKey("stat", name)
	if err != nil {
		return cas.StoredPack{}, err
	}
	if err := s.waitUpload(ctx, name); err != nil {
		return cas.StoredPack{}, err
	}
	ctx, w := s.watch(ctx)
	defer w.stop()
	info, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return cas.StoredPack{}, s.wrap(ctx, "stat", name, err)
	}
	return cas.StoredPack{Name: name, Size: info.Size}, nil
}

// List calls fn with every pack under the prefix's packs/ folder; other
// keys there are skipped.
func (s *Store) List(ctx context.Context, fn func(cas.StoredPack) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.waitUploads(ctx); err != nil {
		return err
	}
	ctx, w := s.watch(ctx) // its end stops minio-go's lister when fn fails
	defer w.stop()
	dir := s.prefix + packsDir
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: dir, Recursive: true}) {
		if obj.Err != nil {
			return s.wrap(ctx, "list", dir, obj.Err)
		}
		name := strings.TrimPrefix(obj.Key, dir)
		if _, ok := cas.PackName(name); !ok {
			continue
		}
		w.pause()
		err := fn(cas.StoredPack{Name: name, Size: obj.Size})
		w.resume()
		if err != nil {
			return err
		}
	}
	return nil
}

// Remove deletes pack name: a HEAD, since S3 deletes a missing key without
// a word, then a DELETE.
func (s *Store) Remove(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	key, err := s.packKey("remove", name)
	if err != nil {
		return err
	}
	if err := s.waitUpload(ctx, name); err != nil {
		return err
	}
	ctx, w := s.watch(ctx)
	defer w.stop()
	if _, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{}); err != nil {
		return s.wrap(ctx, "remove", name, err)
	}
	if err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return s.wrap(ctx, "remove", name, err)
	}
	return nil
}

// SetAside copies pack name to the damaged/ folder on the server, then
// deletes it from packs/.
func (s *Store) SetAside(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	key, err := s.packKey("set aside", name)
	if err != nil {
		return err
	}
	if err := s.waitUpload(ctx, name); err != nil {
		return err
	}
	ctx, w := s.watch(ctx)
	defer w.stop()
	dst := s.prefix + damagedDir + name
	if _, err := s.core.CopyObject(ctx, s.bucket, key, s.bucket, dst, nil, minio.CopySrcOptions{}, minio.PutObjectOptions{}); err != nil {
		return s.wrap(ctx, "set aside", name, err)
	}
	if err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return s.wrap(ctx, "set aside", name, err)
	}
	return nil
}

// RemoveIncomplete aborts the multipart uploads under the prefix's packs/
// folder that started more than a day ago, and returns the bytes of their
// parts. The store's own writers never leave any (they put each pack in
// one request); another program's may.
func (s *Store) RemoveIncomplete(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	ctx, w := s.watch(ctx)
	defer w.stop()
	dir := s.prefix + packsDir
	var freed int64
	for up := range s.client.ListIncompleteUploads(ctx, s.bucket, dir, true) {
		if up.Err != nil {
			return freed, s.wrap(ctx, "list incomplete uploads", dir, up.Err)
		}
		if time.Since(up.Initiated) < s.staleAge {
			continue
		}
		size, err := s.uploadSize(ctx, up.Key, up.UploadID)
		if err != nil {
			return freed, s.wrap(ctx, "list the parts of upload", up.Key, err)
		}
		if err := s.core.AbortMultipartUpload(ctx, s.bucket, up.Key, up.UploadID); err != nil {
			return freed, s.wrap(ctx, "abort upload", up.Key, err)
		}
		freed += size
	}
	return freed, nil
}

// uploadSize adds up the sizes of the parts of an unfinished upload.
func (s *Store) uploadSize(ctx context.Context, key, uploadID string) (int64, error) {
	var size int64
	marker := 0
	for {
		res, err := s.core.ListObjectParts(ctx, s.bucket, key, uploadID, marker, 1000)
		if err != nil {
			return 0, err
		}
		for _, p := range res.ObjectParts {
			size += p.Size
		}
		if !res.IsTruncated {
			return size, nil
		}
		marker = res.NextPartNumberMarker
	}
}
