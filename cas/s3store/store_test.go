package s3store_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/packtest"
	"github.com/casckpt/casckpt/cas/s3store"
	"github.com/casckpt/casckpt/internal/s3test"
	"github.com/minio/minio-go/v7"
)

// config returns the Config of a fresh prefix on srv's bucket.
func config(srv *s3test.Server) s3store.Config {
	var id [6]byte
	rand.Read(id[:])
	return s3store.Config{
		Endpoint:  srv.Endpoint,
		AccessKey: srv.AccessKey,
		SecretKey: srv.SecretKey,
		Region:    srv.Region,
		Bucket:    srv.Bucket,
		Prefix:    "t-" + hex.EncodeToString(id[:]) + "/ckpt",
	}
}

// open opens the store c names, failing the test on an error.
func open(t testing.TB, c s3store.Config) *s3store.Store {
	t.Helper()
	s, err := s3store.New(context.Background(), c)
	if err != nil {
		t.Fatalf("new: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	srv := s3test.Start(t)
	packtest.Run(t, func(t *testing.T) cas.PackStore { return open(t, config(srv)) })
}

// put stores data as pack name, and waits until it is uploaded.
func put(t testing.TB, s cas.PackStore, name string, data []byte) {
	t.Helper()
	if err := tryPut(s, name, data); err != nil {
		t.Fatalf("put %s: %v", name, err)
	}
}

// closeSync closes w and waits for its upload: it returns the error of
// Close, else of the store's Sync.
func closeSync(s cas.PackStore, w cas.PackWriter) error {
	if err := w.Close(); err != nil {
		return err
	}
	return s.Sync(context.Background())
}

// object reads key of srv's bucket behind the store's back.
func object(t testing.TB, srv *s3test.Server, key string) []byte {
	t.Helper()
	obj, err := srv.Client(t).GetObject(context.Background(), srv.Bucket, key, minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	b, err := io.ReadAll(obj)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	return b
}

// TestConditionalPut: of two writers of one name, the second's Close is
// refused by the server, and the bucket keeps the first's bytes.
func TestConditionalPut(t *testing.T) {
	srv := s3test.Start(t)
	c := config(srv)
	s := open(t, c)
	ctx := context.Background()
	name := packtest.NewName()
	first, second := []byte("the first writer's pack"), []byte("the second writer's pack, longer")
	w1, err := s.Create(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	w2, err := s.Create(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	w1.Write(first)
	w2.Write(second)
	if err := closeSync(s, w1); err != nil {
		t.Fatalf("first close: %v", err)
	}
	err = closeSync(s, w2)
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second close: %v, want an error matching fs.ErrExist", err)
	}
	if got := object(t, srv, c.Prefix+"/packs/"+name); !bytes.Equal(got, first) {
		t.Fatalf("the bucket holds %q, want the first writer's %q", got, first)
	}
	// A second store on the same prefix (another machine) is refused too.
	if err := tryPut(open(t, c), name, second); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("another store's close: %v, want an error matching fs.ErrExist", err)
	}
	if got := object(t, srv, c.Prefix+"/packs/"+name); !bytes.Equal(got, first) {
		t.Fatalf("the bucket holds %q after another store's try", got)
	}
}

// tryPut stores data as pack name and returns the error of Close or of
// the Sync after it.
func tryPut(s cas.PackStore, name string, data []byte) error {
	if err := closePack(s, name, data); err != nil {
		return err
	}
	return s.Sync(context.Background())
}

// closePack writes data as pack name of s and closes it, which starts its
// upload, and returns the first error.
func closePack(s cas.PackStore, name string, data []byte) error {
	w, err := s.Create(context.Background(), name)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}

// TestProbe: New leaves no probe object behind on a server that honours
// conditional writes, and refuses one that does not.
func TestProbe(t *testing.T) {
	srv := s3test.Start(t)
	c := config(srv)
	open(t, c)
	for obj := range srv.Client(t).ListObjects(context.Background(), srv.Bucket, minio.ListObjectsOptions{Recursive: true}) {
		t.Errorf("New left %s (%v) in the bucket", obj.Key, obj.Err)
	}
	for _, tc := range []struct{ name, answer string }{
		{"ignores", "200"}, // the server stored nothing, but says it did
		{"not implemented", "501"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := config(srv)
			c.Endpoint = ignoringProxy(t, srv, tc.answer)
			_, err := s3store.New(context.Background(), c)
			if err == nil || !strings.Contains(err.Error(), "ignores conditional writes") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("new through a server that ignores If-None-Match: %v, want a one-line refusal", err)
			}
			t.Log(err)
		})
	}
}

// ignoringProxy returns the address of a proxy in front of srv that plays
// a server without conditional writes: it answers a put refused with 412
// by answer ("200": as if it had stored it; "501": Not Implemented).
func ignoringProxy(t *testing.T, srv *s3test.Server, answer string) string {
	target, _ := url.Parse(srv.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method != http.MethodPut || resp.StatusCode != http.StatusPreconditionFailed {
			return nil
		}
		resp.Body.Close()
		resp.Body, resp.ContentLength = io.NopCloser(strings.NewReader("")), 0
		resp.Header.Del("Content-Length")
		resp.StatusCode, resp.Status = http.StatusOK, "200 OK"
		if answer == "501" {
			body := `<?xml version="1.0" encoding="UTF-8"?><Error><Code>NotImplemented</Code><Message>conditional writes are not implemented</Message></Error>`
			resp.Body, resp.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
			resp.StatusCode, resp.Status = http.StatusNotImplemented, "501 Not Implemented"
		}
		return nil
	}
	ts := httptest.NewServer(proxy)
	t.Cleanup(ts.Close)
	return strings.TrimPrefix(ts.URL, "http://")
}

// TestNewMissingBucket: a bucket that does not exist is named in New's
// error.
func TestNewMissingBucket(t *testing.T) {
	srv := s3test.Start(t)
	c := config(srv)
	c.Bucket = "no-such-bucket"
	_, err := s3store.New(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), `bucket "no-such-bucket" does not exist`) {
		t.Fatalf("new on a missing bucket: %v", err)
	}
	c = config(srv)
	c.SecretKey = "wrong"
	if _, err := s3store.New(context.Background(), c); err == nil || !strings.Contains(err.Error(), "AWS_SECRET_ACCESS_KEY") {
		t.Fatalf("new with a wrong secret key: %v", err)
	}
}

// TestServerStopped: while the server is down every call fails with an
// error that says it cannot be reached (not that a pack is missing); once
// it is back, the same store and reader work again and nothing was lost.
func TestServerStopped(t *testing.T) {
	srv := s3test.Start(t)
	c := config(srv)
	c.MaxRetries = 1 // the test does not wait out minio-go's backoff
	s := open(t, c)
	ctx := context.Background()
	name, data := packtest.NewName(), bytes.Repeat([]byte("pack bytes "), 1000)
	put(t, s, name, data)
	r, err := s.Open(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, err := s.Create(ctx, packtest.NewName())
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)

	srv.Stop()
	down := func(op string, err error) {
		t.Helper()
		if err == nil || errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "cannot reach "+srv.Endpoint) {
			t.Errorf("%s while the server is down: %v, want a cannot-reach error", op, err)
		}
	}
	_, err = s.Stat(ctx, name)
	down("stat", err)
	t.Log(err)
	_, err = r.ReadAt(make([]byte, 10), 0)
	down("read", err)
	down("close of a writer", closeSync(s, w))
	down("list", s.List(ctx, func(cas.StoredPack) error { return nil }))
	down("remove", s.Remove(ctx, name))
	_, err = s3store.New(ctx, c)
	down("new", err)

	srv.Restart()
	buf := make([]byte, len(data))
	if n, err := r.ReadAt(buf, 0); err != nil && err != io.EOF || n != len(data) || !bytes.Equal(buf, data) {
		t.Fatalf("read after the restart: %d bytes, %v", n, err)
	}
	other := packtest.NewName()
	put(t, s, other, data)
	var names []string
	if err := s.List(ctx, func(p cas.StoredPack) error { names = append(names, p.Name); return nil }); err != nil || len(names) != 2 {
		t.Fatalf("list after the restart: %v %v, want %s and %s", names, err, name, other)
	}
}

// TestRemoveIncomplete: an unfinished multipart upload under packs/ (from
// another program) is kept while fresh and aborted once stale.
func TestRemoveIncomplete(t *testing.T) {
	srv := s3test.Start(t)
	c := config(srv)
	s := open(t, c)
	ctx := context.Background()
	core := minio.Core{Client: srv.Client(t)}
	key := c.Prefix + "/packs/" + packtest.NewName()
	id, err := core.NewMultipartUpload(ctx, srv.Bucket, key, minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	part := bytes.Repeat([]byte{7}, 4096)
	if _, err := core.PutObjectPart(ctx, srv.Bucket, key, id, 1, bytes.NewReader(part), int64(len(part)), minio.PutObjectPartOptions{}); err != nil {
		t.Fatal(err)
	}
	if freed, err := s.RemoveIncomplete(ctx); err != nil || freed != 0 {
		t.Fatalf("remove incomplete with a fresh upload: %d bytes, %v; want it kept", freed, err)
	}
	s3store.SetStaleAge(s, 0)
	if freed, err := s.RemoveIncomplete(ctx); err != nil || freed != int64(len(part)) {
		t.Fatalf("remove incomplete with a stale upload: %d bytes, %v; want %d", freed, err, len(part))
	}
	for up := range srv.Client(t).ListIncompleteUploads(ctx, srv.Bucket, c.Prefix, true) {
		t.Errorf("upload %s %s is left (%v)", up.Key, up.UploadID, up.Err)
	}
}

// counter counts the HTTP requests that pass through it, by method.
type counter struct {
	base http.RoundTripper
	mu   sync.Mutex
	reqs []string
}

func (c *counter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.reqs = append(c.reqs, r.Method)
	c.mu.Unlock()
	return c.base.RoundTrip(r)
}

// take returns the requests counted since the last take, as
// "GET HEAD ...".
func (c *counter) take() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := strings.Join(c.reqs, " ")
	c.reqs = nil
	return s
}

// TestRequestCounts pins the requests each call makes (issue #14 asks for
// request counts): one per read or write of a pack, two for Remove and
// SetAside, none for Create and Sync.
func TestRequestCounts(t *testing.T) {
	srv := s3test.Start(t)
	base, err := minio.DefaultTransport(false)
	if err != nil {
		t.Fatal(err)
	}
	cnt := &counter{base: base}
	c := config(srv)
	c.Transport = cnt
	ctx := context.Background()
	s := open(t, c)
	check := func(op, want string) {
		t.Helper()
		got := cnt.take()
		t.Logf("%-17s %d requests: %s", op, len(strings.Fields(got)), got)
		if got != want {
			t.Errorf("%s made requests %q, want %q", op, got, want)
		}
	}
	check("New", "PUT PUT DELETE")
	name, data := packtest.NewName(), bytes.Repeat([]byte("x"), 100_000)
	w, _ := s.Create(ctx, name)
	check("Create", "")
	w.Write(data)
	check("Write", "")
	if err := closeSync(s, w); err != nil {
		t.Fatal(err)
	}
	check("Close+Sync", "PUT")
	if err := tryPut(s, name, data[:10]); !errors.Is(err, fs.ErrExist) {
		t.Fatal(err)
	}
	check("Close+Sync (refused)", "PUT HEAD")
	r, err := s.Open(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	check("Open", "HEAD")
	r.ReadAt(make([]byte, 4096), 5000)
	check("ReadAt", "GET")
	r.ReadAt(make([]byte, 4096), 50_000)
	check("ReadAt (cached)", "")
	r.ReadAt(make([]byte, 10), int64(len(data)))
	check("ReadAt (past end)", "")
	r.Close()
	s.Stat(ctx, name)
	check("Stat", "HEAD")
	s.List(ctx, func(cas.StoredPack) error { return nil })
	check("List", "GET")
	s.Sync(ctx)
	check("Sync", "")
	s.SetAside(ctx, name)
	check("SetAside", "PUT DELETE")
	put(t, s, name, data)
	cnt.take()
	s.Remove(ctx, name)
	check("Remove", "HEAD DELETE")
	s.RemoveIncomplete(ctx)
	check("RemoveIncomplete", "GET")
}

// TestCloseRetried: a PUT that landed but whose answer was lost (here: a
// proxy answers 503 after the server stored the pack) is retried by
// minio-go; the retry's 412 is the writer's own pack, and Close succeeds.
// Another writer's bytes under the name are still refused. The progress
// reports count the pack's bytes once.
func TestCloseRetried(t *testing.T) {
	srv := s3test.Start(t)
	target, _ := url.Parse(srv.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	var mu sync.Mutex
	lost := 0
	proxy.ModifyResponse = func(resp *http.Response) error {
		mu.Lock()
		defer mu.Unlock()
		if resp.Request.Method != http.MethodPut || !strings.Contains(resp.Request.URL.Path, "/packs/") || resp.StatusCode != http.StatusOK || lost > 0 {
			return nil
		}
		lost++
		body := `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>answer lost</Message></Error>`
		resp.Body.Close()
		resp.Body, resp.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
		resp.Header.Del("Content-Length")
		resp.StatusCode, resp.Status = http.StatusServiceUnavailable, "503 Service Unavailable"
		return nil
	}
	ts := httptest.NewServer(proxy)
	defer ts.Close()
	c := config(srv)
	c.Endpoint = strings.TrimPrefix(ts.URL, "http://")
	var reported atomic.Int64
	c.Progress = func(n int64) { reported.Add(n) }
	s := open(t, c)
	name, data := packtest.NewName(), []byte("a pack whose first answer is lost")
	put(t, s, name, data)
	if lost != 1 {
		t.Fatalf("the proxy lost %d answers, want 1", lost)
	}
	if got := reported.Load(); got != int64(len(data)) {
		t.Fatalf("progress reported %d bytes of a pack of %d sent twice, want each byte once", got, len(data))
	}
	if got := object(t, srv, c.Prefix+"/packs/"+name); !bytes.Equal(got, data) {
		t.Fatalf("the bucket holds %q", got)
	}
	if err := tryPut(s, name, []byte("another writer's pack of that name")); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("another writer's close: %v, want an error matching fs.ErrExist", err)
	}
}

// TestSetAsideKeepsBytes: a pack set aside is kept under damaged/.
func TestSetAsideKeepsBytes(t *testing.T) {
	srv := s3test.Start(t)
	c := config(srv)
	s := open(t, c)
	name, data := packtest.NewName(), []byte("damaged pack bytes")
	put(t, s, name, data)
	if err := s.SetAside(context.Background(), name); err != nil {
		t.Fatal(err)
	}
	if got := object(t, srv, c.Prefix+"/damaged/"+name); !bytes.Equal(got, data) {
		t.Fatalf("damaged/%s holds %q, want %q", name, got, data)
	}
}

// stallTransport holds the first PUT of a pack when half its body is sent:
// it closes half, and goes on sending when resume is closed.
type stallTransport struct {
	base         http.RoundTripper
	once         sync.Once
	half, resume chan struct{}
}

func (s *stallTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	stall := false
	if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/packs/") && r.ContentLength > 0 {
		s.once.Do(func() { stall = true })
	}
	if !stall {
		return s.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Body = &stallBody{ReadCloser: r.Body, left: r.ContentLength / 2, t: s}
	return s.base.RoundTrip(r)
}

// stallBody is a request body that stops after left bytes until resumed.
type stallBody struct {
	io.ReadCloser
	left    int64
	t       *stallTransport
	stalled bool
}

func (b *stallBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		if !b.stalled {
			b.stalled = true
			close(b.t.half)
			<-b.t.resume
		}
		return b.ReadCloser.Read(p)
	}
	n, err := b.ReadCloser.Read(p[:min(int64(len(p)), b.left)])
	b.left -= int64(n)
	return n, err
}

// TestServerKilledMidPut: the server killed while half a pack is sent
// makes Close fail with a cannot-reach error and stores nothing under
// the name; once the server is back the pack is written whole.
func TestServerKilledMidPut(t *testing.T) {
	srv := s3test.Start(t)
	base, err := minio.DefaultTransport(false)
	if err != nil {
		t.Fatal(err)
	}
	st := &stallTransport{base: base, half: make(chan struct{}), resume: make(chan struct{})}
	c := config(srv)
	c.Transport, c.MaxRetries = st, 1
	s := open(t, c)
	name, data := packtest.NewName(), bytes.Repeat([]byte("0123456789abcdef"), 256<<10) // 4 MiB
	w, err := s.Create(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	closed := make(chan error, 1)
	go func() { closed <- closeSync(s, w) }()
	<-st.half
	srv.Stop()
	close(st.resume)
	err = <-closed
	if err == nil || errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), "cannot reach") {
		t.Fatalf("close while the server was killed: %v, want a cannot-reach error", err)
	}
	t.Log(err)
	srv.Restart()
	if _, err := s.Stat(context.Background(), name); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat of the pack cut in half: %v, want fs.ErrNotExist", err)
	}
	put(t, s, name, data)
	if got := object(t, srv, c.Prefix+"/packs/"+name); !bytes.Equal(got, data) {
		t.Fatalf("the pack written after the restart: %d bytes, want %d", len(got), len(data))
	}
}
