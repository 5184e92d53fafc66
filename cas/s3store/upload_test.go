package s3store_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/packtest"
	"github.com/casckpt/casckpt/cas/s3store"
	"github.com/casckpt/casckpt/internal/s3test"
	"github.com/minio/minio-go/v7"
)

// isPackPut reports whether r puts a pack.
func isPackPut(r *http.Request) bool {
	return r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/packs/")
}

// baseTransport is minio-go's transport, for a test's own to wrap.
func baseTransport(t *testing.T) http.RoundTripper {
	t.Helper()
	base, err := minio.DefaultTransport(false)
	if err != nil {
		t.Fatal(err)
	}
	return base
}

// gate counts the PUTs of packs in flight through it, and holds them until
// hold of them are in flight at once (or a minute has passed, so that a
// store that sends one at a time fails the test instead of hanging it).
type gate struct {
	base     http.RoundTripper
	hold     int
	mu       sync.Mutex
	inFlight int
	max      int
	full     chan struct{} // closed when hold PUTs were in flight
	opened   bool          // full is closed
}

func (g *gate) RoundTrip(r *http.Request) (*http.Response, error) {
	if !isPackPut(r) {
		return g.base.RoundTrip(r)
	}
	g.mu.Lock()
	g.inFlight++
	g.max = max(g.max, g.inFlight)
	if g.inFlight == g.hold && !g.opened {
		g.opened = true
		close(g.full)
	}
	g.mu.Unlock()
	select {
	case <-g.full:
	case <-time.After(time.Minute):
	}
	resp, err := g.base.RoundTrip(r)
	g.mu.Lock()
	g.inFlight--
	g.mu.Unlock()
	return resp, err
}

// TestParallelUploads: a writer that closes more packs than the store
// sends at once has exactly that many PUTs in flight (no more: the
// closes wait), every pack is stored once Sync returns, and the progress
// reports add up to the packs' sizes.
func TestParallelUploads(t *testing.T) {
	srv := s3test.Start(t)
	base := baseTransport(t)
	g := &gate{base: base, hold: s3store.MaxUploads, full: make(chan struct{})}
	var reported atomic.Int64
	c := config(srv)
	c.Transport = g
	c.Progress = func(n int64) { reported.Add(n) }
	s := open(t, c)
	ctx := context.Background()
	packs := map[string][]byte{}
	var total int64
	for i := range s3store.MaxUploads + 3 {
		name, data := packtest.NewName(), bytes.Repeat([]byte{byte(i)}, 300_000+i)
		if err := closePack(s, name, data); err != nil {
			t.Fatalf("close pack %d: %v", i, err)
		}
		packs[name] = data
		total += int64(len(data))
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatalf("sync: %v", err)
	}
	if g.max != s3store.MaxUploads {
		t.Errorf("%d PUTs of packs were in flight at most, want %d", g.max, s3store.MaxUploads)
	}
	if got := reported.Load(); got != total {
		t.Errorf("progress reported %d bytes, want the packs' %d", got, total)
	}
	c.Transport, c.Probed, c.Progress = nil, true, nil
	other := open(t, c) // another machine: what the bucket holds
	for name, data := range packs {
		if got := readPack(t, other, name); !bytes.Equal(got, data) {
			t.Fatalf("%s reads %d bytes, want %d", name, len(got), len(data))
		}
	}
}

// readPack reads pack name of s whole.
func readPack(t *testing.T, s cas.PackStore, name string) []byte {
	t.Helper()
	r, err := s.Open(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]byte, r.Size())
	if _, err := r.ReadAt(buf, 0); err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return buf
}

// failing fails the PUT of the packs it names, as an unreachable server
// would (once release is closed, when it is not nil).
type failing struct {
	base    http.RoundTripper
	mu      sync.Mutex
	fail    map[string]bool // pack names
	release chan struct{}
}

func (f *failing) RoundTrip(r *http.Request) (*http.Response, error) {
	f.mu.Lock()
	fail := isPackPut(r) && f.fail[r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]]
	f.mu.Unlock()
	if fail && f.release != nil {
		<-f.release
	}
	if fail {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, errors.New("connection reset by the test")
	}
	return f.base.RoundTrip(r)
}

// TestUploadFails: a pack whose upload fails makes Sync fail with a
// one-line error that names it and says what to do, and is not stored;
// the other packs are; the failure is returned once, and a failure not
// yet returned fails the next Close (the writer stops at once).
func TestUploadFails(t *testing.T) {
	srv := s3test.Start(t)
	base := baseTransport(t)
	bad := packtest.NewName()
	f := &failing{base: base, fail: map[string]bool{bad: true}}
	c := config(srv)
	c.Transport, c.MaxRetries = f, 1
	s := open(t, c)
	ctx := context.Background()
	good := []string{packtest.NewName(), packtest.NewName()}
	for _, name := range []string{good[0], good[1], bad} { // the failure comes last: no Close returns it
		if err := closePack(s, name, []byte("the bytes of "+name)); err != nil {
			t.Fatalf("close %s: %v", name, err)
		}
	}
	err := s.Sync(ctx)
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "check AWS_ENDPOINT_URL") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("sync after a failed upload: %v, want a one-line error naming %s", err, bad)
	}
	t.Log(err)
	if err := s.Sync(ctx); err != nil {
		t.Fatalf("a second sync: %v, want nil (the failure was returned)", err)
	}
	if _, err := s.Stat(ctx, bad); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat of the pack whose upload failed: %v, want fs.ErrNotExist", err)
	}
	for _, name := range good {
		if _, err := s.Stat(ctx, name); err != nil {
			t.Fatalf("stat of a pack uploaded: %v", err)
		}
	}

	// A failure that no Sync returned fails the next Close, which sends
	// nothing.
	bad2, next := packtest.NewName(), packtest.NewName()
	f.mu.Lock()
	f.fail[bad2] = true
	f.mu.Unlock()
	if err := closePack(s, bad2, []byte("bytes")); err != nil {
		t.Fatalf("close %s: %v", bad2, err)
	}
	if _, err := s.Stat(ctx, bad2); !errors.Is(err, fs.ErrNotExist) { // waits for the upload
		t.Fatalf("stat of the pack whose upload failed: %v", err)
	}
	if err := closePack(s, next, []byte("bytes")); err == nil || !strings.Contains(err.Error(), bad2) {
		t.Fatalf("close after a failed upload: %v, want its failure", err)
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatalf("sync after the close that returned the failure: %v", err)
	}
	if _, err := s.Stat(ctx, next); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat of the pack whose close failed: %v, want fs.ErrNotExist", err)
	}
}

// damaging flips one byte in the middle of the body of every PUT of a
// pack, as a faulty proxy or network card would.
type damaging struct{ base http.RoundTripper }

func (d damaging) RoundTrip(r *http.Request) (*http.Response, error) {
	if isPackPut(r) && r.Body != nil {
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		body[len(body)/2] ^= 0x40
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	return d.base.RoundTrip(r)
}

// TestDamagedBodyRefused: over http, where a PUT's body is signed chunk
// by chunk and sent without a Content-MD5, a pack whose bytes are damaged
// on the way to the server is refused by it, so Sync fails and no damaged
// pack is stored.
func TestDamagedBodyRefused(t *testing.T) {
	srv := s3test.Start(t)
	base := baseTransport(t)
	c := config(srv)
	c.Transport, c.MaxRetries = damaging{base}, 1
	s := open(t, c)
	ctx := context.Background()
	name := packtest.NewName()
	err := closePack(s, name, bytes.Repeat([]byte("the bytes of a pack "), 4096))
	if err == nil {
		err = s.Sync(ctx)
	}
	if err == nil {
		t.Fatalf("sync of a pack damaged on the way: nil, want the server's refusal; stored: %q", readPack(t, s, name)[:40])
	}
	t.Log(err)
	if _, err := s.Stat(ctx, name); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat of the damaged pack: %v, want fs.ErrNotExist", err)
	}
}

// TestSyncPacksIsPerWriter: two writers share a store and one's upload
// fails after both closed their packs. Whichever syncs first, each
// SyncPacks returns exactly the failures of the packs it names: the other
// writer neither fails on it nor takes it away from its writer; and a
// failure returned by SyncPacks no longer fails the next Close nor Sync.
func TestSyncPacksIsPerWriter(t *testing.T) {
	srv := s3test.Start(t)
	base := baseTransport(t)
	ctx := context.Background()
	for _, failingFirst := range []bool{false, true} {
		bad := packtest.NewName()
		f := &failing{base: base, fail: map[string]bool{bad: true}, release: make(chan struct{})}
		c := config(srv)
		c.Transport, c.MaxRetries = f, 1
		s := open(t, c)
		a := []string{bad, packtest.NewName()} // the failing writer's packs
		b := []string{packtest.NewName(), packtest.NewName()}
		for _, name := range append(append([]string{}, a...), b...) {
			if err := closePack(s, name, []byte("the bytes of "+name)); err != nil {
				t.Fatalf("close %s: %v", name, err)
			}
		}
		close(f.release)
		syncA := func() {
			if err := s.SyncPacks(ctx, a); err == nil || !strings.Contains(err.Error(), bad) {
				t.Fatalf("SyncPacks of the writer whose upload failed: %v, want the failure naming %s", err, bad)
			}
		}
		if failingFirst {
			syncA()
		}
		if err := s.SyncPacks(ctx, b); err != nil {
			t.Fatalf("SyncPacks of the other writer (failing writer synced first: %v): %v, want nil", failingFirst, err)
		}
		if !failingFirst {
			syncA()
		}
		for _, name := range append(b, a[1]) {
			if _, err := s.Stat(ctx, name); err != nil {
				t.Fatalf("stat of %s, uploaded: %v", name, err)
			}
		}
		if err := s.SyncPacks(ctx, a); err != nil {
			t.Fatalf("a second SyncPacks of the failing writer: %v, want nil (returned once)", err)
		}
		if err := closePack(s, packtest.NewName(), []byte("next")); err != nil {
			t.Fatalf("close after the failure was returned by SyncPacks: %v, want nil", err)
		}
		if err := s.Sync(ctx); err != nil {
			t.Fatalf("sync after the failure was returned by SyncPacks: %v, want nil", err)
		}
	}
}

// conflictWatch counts the PUTs of packs through it and the 409s the
// server answered them, calling onConflict (when set) after each 409.
type conflictWatch struct {
	base       http.RoundTripper
	puts       atomic.Int32
	conflicts  atomic.Int32
	onConflict func()
}

func (w *conflictWatch) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := w.base.RoundTrip(r)
	if isPackPut(r) {
		w.puts.Add(1)
		if err == nil && resp.StatusCode == http.StatusConflict {
			w.conflicts.Add(1)
			if w.onConflict != nil {
				w.onConflict()
			}
		}
	}
	return resp, err
}

// TestPutTriesAgainAfterAConflict: a PUT that the server answers 409 for
// a reason other than its condition is sent again. versitygw's posix back
// end answers ExistingObjectIsDirectory to a PUT of key K while a
// directory stands at K, which is what a DELETE racing the PUT leaves for
// a moment. The test makes one stand there (an object under K/) and
// removes it once the server has refused the first try: the pack is then
// stored, whole, by the next. A conflict that lasts fails Sync after
// three more tries, in one line that says what the server answered.
func TestPutTriesAgainAfterAConflict(t *testing.T) {
	srv := s3test.Start(t)
	raw := srv.Client(t)
	ctx := context.Background()
	for _, lasting := range []bool{false, true} {
		c := config(srv)
		name := packtest.NewName()
		blocker := c.Prefix + "/packs/" + name + "/blocker"
		if _, err := raw.PutObject(ctx, srv.Bucket, blocker, strings.NewReader("x"), 1, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
		w := &conflictWatch{base: baseTransport(t)}
		if !lasting {
			var once sync.Once
			w.onConflict = func() {
				once.Do(func() {
					if err := raw.RemoveObject(ctx, srv.Bucket, blocker, minio.RemoveObjectOptions{}); err != nil {
						t.Error(err)
					}
				})
			}
		}
		c.Transport = w
		s := open(t, c)
		data := bytes.Repeat([]byte("the bytes of a pack "), 4096)
		err := closePack(s, name, data)
		if err == nil {
			err = s.Sync(ctx)
		}
		t.Logf("lasting %v: %d PUTs, %d answered 409; %v", lasting, w.puts.Load(), w.conflicts.Load(), err)
		if w.conflicts.Load() == 0 {
			t.Fatal("the server never answered 409: the test no longer makes the conflict")
		}
		if !lasting {
			if err != nil {
				t.Fatalf("sync after a conflict that passed: %v", err)
			}
			if got := readPack(t, s, name); !bytes.Equal(got, data) {
				t.Fatalf("the pack stored after a conflict has %d bytes, want its %d", len(got), len(data))
			}
			if w.puts.Load() != 2 {
				t.Fatalf("%d PUTs, want 2: the refused one and one more", w.puts.Load())
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "409") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("sync while the conflict lasts: %v, want a one-line error naming %s and the 409", err, name)
		}
		if w.puts.Load() != 4 {
			t.Fatalf("%d PUTs while the conflict lasts, want 4: one and three more", w.puts.Load())
		}
	}
}
