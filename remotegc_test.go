package casckpt_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/s3test"
	"github.com/minio/minio-go/v7"
)

// testGrace is the gc grace period of the tests on a bucket.
const testGrace = 2 * time.Second

// countingTransport counts the requests a store makes, by method, and logs
// every DELETE of a pack.
type countingTransport struct {
	mu      sync.Mutex
	counts  map[string]int
	deletes []string // keys
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	if c.counts == nil {
		c.counts = map[string]int{}
	}
	c.counts[r.Method]++
	if r.Method == http.MethodDelete && strings.HasSuffix(r.URL.Path, ".pack") {
		c.deletes = append(c.deletes, r.URL.Path)
	}
	c.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func (c *countingTransport) take() (map[string]int, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	counts, deletes := c.counts, c.deletes
	c.counts, c.deletes = nil, nil
	return counts, deletes
}

// openGC opens the store at url on srv as a machine of its own with the
// test's grace period and requests through tr (nil: the default). The
// machine must verify clean when the test ends, in a store opened anew
// on its cache: one that syncs with the bucket then (a store syncs at
// most every second, and the test's clock moves without waiting).
func openGC(t *testing.T, srv *s3test.Server, url string, tr http.RoundTripper) *casckpt.Store {
	t.Helper()
	cache := t.TempDir()
	t.Cleanup(func() { checkVerifies(t, openGCIn(t, srv, url, cache, testGrace)) })
	return openGCWith(t, srv, url, casckpt.Options{CacheDir: cache, S3Transport: tr, GCGrace: testGrace})
}

// openGCIn opens the store at url on srv over the cache in cache (a
// machine) with grace period grace, as a command would: its first use
// syncs with the bucket.
func openGCIn(t *testing.T, srv *s3test.Server, url, cache string, grace time.Duration) *casckpt.Store {
	t.Helper()
	return openGCWith(t, srv, url, casckpt.Options{CacheDir: cache, GCGrace: grace})
}

// openGCWith opens the store at url on srv with opts.
func openGCWith(t *testing.T, srv *s3test.Server, url string, opts casckpt.Options) *casckpt.Store {
	t.Helper()
	opts.S3 = s3Server(srv)
	s, err := casckpt.OpenURL(context.Background(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// packKeys lists the packs of the store at url, behind its back.
func packKeys(t *testing.T, srv *s3test.Server, url string) []string {
	prefix := strings.TrimPrefix(url, "s3://"+srv.Bucket+"/") + "/"
	return keysUnder(t, srv, prefix+"packs/")
}

// writeFiles fills dir with n files of content made from seed, big enough
// to be stored whole and not compress to nothing.
func writeFiles(t *testing.T, dir, seed string, n int) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for i := range n {
		var b bytes.Buffer
		for j := 0; b.Len() < 20000; j++ {
			fmt.Fprintf(&b, "%s %d %d %x\n", seed, i, j, (j*7919+i)*2654435761)
		}
		name := fmt.Sprintf("f%d.txt", i)
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		files[name] = b.Bytes()
	}
	return files
}

// restoresExactly restores snapshot id of project dir with s into dir and
// checks that dir holds exactly files.
func restoresExactly(t *testing.T, s *casckpt.Store, dir string, id casckpt.ID, files map[string][]byte) {
	t.Helper()
	if _, err := s.Restore(context.Background(), dir, casckpt.Ref(id.String()), casckpt.RestoreOptions{}); err != nil {
		t.Fatalf("restore %s: %v", id.Short(), err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != len(files) {
		t.Fatalf("restore %s: %d entries (%v), want %d", id.Short(), len(entries), err, len(files))
	}
	for name, want := range files {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("restore %s: %s differs (%v)", id.Short(), name, err)
		}
	}
}

// TestS3GCTwoPhases: gc on a bucket deletes nothing in its first run; a
// snapshot taken meanwhile of objects in a pending pack stores them again;
// past the grace period a second run deletes exactly the packs of the
// forgotten snapshot whose data no snapshot needs (the other forgotten
// one's data is live again through the new snapshot, so its pack stays),
// and every snapshot left restores from a new cache.
func TestS3GCTwoPhases(t *testing.T) {
	srv := s3test.Start(t)
	url := s3URL(srv)
	ctx := context.Background()
	tr := &countingTransport{}
	a := openGC(t, srv, url, tr)
	dir := t.TempDir()
	var ids []casckpt.ID
	var trees []map[string][]byte
	var added [][]string // the packs each snapshot added
	for i := range 3 {
		os.RemoveAll(dir)
		os.MkdirAll(dir, 0o755)
		trees = append(trees, writeFiles(t, dir, fmt.Sprint("v", i), 3))
		was := packKeys(t, srv, url)
		res, err := a.Snapshot(ctx, dir, casckpt.SnapshotOptions{})
		if err != nil || !res.Created {
			t.Fatalf("snapshot %d: %+v %v", i, res, err)
		}
		ids = append(ids, res.ID)
		var news []string
		for _, k := range packKeys(t, srv, url) {
			if !slices.Contains(was, k) {
				news = append(news, k)
			}
		}
		added = append(added, news)
	}
	before := packKeys(t, srv, url)
	for _, id := range ids[:2] {
		if _, err := a.Forget(ctx, dir, casckpt.Ref(id.String())); err != nil {
			t.Fatal(err)
		}
	}
	tr.take()
	res, err := a.GC(ctx)
	counts, deletes := tr.take()
	t.Logf("gc, first phase: %+v, requests %v", res, counts)
	if err != nil || res.ObjectsDeleted != 0 || len(deletes) != 0 || !slices.Equal(packKeys(t, srv, url), before) {
		t.Fatalf("first gc: %+v %v, deleted %v", res, err, deletes)
	}

	// Another machine snapshots the first forgotten tree: its objects sit
	// in a pending pack, so it stores them again.
	b := openGC(t, srv, url, nil)
	dirB := t.TempDir()
	for name, data := range trees[0] {
		os.WriteFile(filepath.Join(dirB, name), data, 0o644)
	}
	resB, err := b.Snapshot(ctx, dirB, casckpt.SnapshotOptions{})
	if err != nil || !resB.Created || resB.Stored.Objects < 3 {
		t.Fatalf("snapshot of the forgotten tree: %+v %v (it must store its files again)", resB, err)
	}

	srv.Advance(testGrace + time.Second) // the server's clock passes the grace period
	res, err = a.GC(ctx)
	counts, deletes = tr.take()
	t.Logf("gc, second phase: %+v, requests %v, deleted %v", res, counts, deletes)
	if err != nil || res.ObjectsDeleted == 0 {
		t.Fatalf("second gc: %+v %v", res, err)
	}
	var deleted []string
	for _, d := range deletes {
		deleted = append(deleted, d[strings.Index(d, "/packs/")+1:])
	}
	var want []string
	for _, k := range added[1] {
		want = append(want, k[strings.Index(k, "packs/"):])
	}
	slices.Sort(deleted)
	slices.Sort(want)
	if !slices.Equal(deleted, want) {
		t.Fatalf("second gc deleted %v, want exactly the packs of the forgotten snapshot %v", deleted, want)
	}
	for _, key := range packKeys(t, srv, url) {
		if slices.ContainsFunc(deletes, func(d string) bool { return strings.HasSuffix(d, key) }) {
			t.Fatalf("pack %s deleted and still listed", key)
		}
	}

	fresh := openGC(t, srv, url, nil)
	restoresExactly(t, fresh, dir, ids[2], trees[2])
	restoresExactly(t, fresh, dirB, resB.ID, trees[0])
	for _, id := range ids[:2] {
		if _, err := fresh.Restore(ctx, dir, casckpt.Ref(id.String()), casckpt.RestoreOptions{}); err == nil {
			t.Fatalf("forgotten snapshot %s restores", id.Short())
		}
	}
}

// TestS3GCFleet: four machines (four caches) snapshot projects of
// overlapping content into one bucket under a keep rule while a fifth runs
// gc and prune in a loop with a short grace period. Afterwards every
// snapshot that reported success and was not dropped restores byte-exact
// from a new cache, the store verifies clean, and gc did delete packs.
// After each gc and prune the server's clock moves on by half the grace
// period, while no snapshot runs (a snapshot times itself by this
// machine's clock, which does not move, from its sync; each round is a
// command of its own, a store opened on the machine's cache): gc's second
// phase deletes while the machines write.
func TestS3GCFleet(t *testing.T) {
	srv := s3test.Start(t)
	url := s3URL(srv)
	ctx := context.Background()
	type taken struct {
		dir   string
		id    casckpt.ID
		files map[string][]byte
	}
	var (
		mu      sync.Mutex
		kept    = map[casckpt.ID]taken{}
		refused int
		// clock is held shared by each snapshot and exclusively to
		// advance the server's clock between snapshots.
		clock sync.RWMutex
	)
	writers := make([]string, 4) // their caches
	for m := range writers {
		writers[m] = t.TempDir()
		t.Cleanup(func() { checkVerifies(t, openGCIn(t, srv, url, writers[m], testGrace)) })
	}
	tr := &countingTransport{}
	collector := openGC(t, srv, url, tr)
	done := make(chan struct{})
	gcErrs := make(chan error, 1)
	go func() {
		defer close(gcErrs)
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := collector.GC(ctx); err != nil && !errors.Is(err, casckpt.ErrRefused) {
				gcErrs <- fmt.Errorf("gc: %w", err)
				return
			}
			if _, err := collector.Prune(ctx, casckpt.PruneOptions{}); err != nil && !errors.Is(err, casckpt.ErrRefused) {
				gcErrs <- fmt.Errorf("prune: %w", err)
				return
			}
			clock.Lock()
			srv.Advance(testGrace / 2)
			clock.Unlock()
			time.Sleep(200 * time.Millisecond)
		}
	}()
	var wg sync.WaitGroup
	errs := make([]error, len(writers))
	for m, cache := range writers {
		dir := t.TempDir()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 8 {
				files := map[string][]byte{}
				for name, data := range fleetFiles(t, dir, "common", round/3, 4) { // shared by every machine
					files[name] = data
				}
				for name, data := range fleetFiles(t, dir, fmt.Sprint("own", m), round, 3) {
					files[name] = data
				}
				clock.RLock()
				s, err := casckpt.OpenURL(ctx, url, casckpt.Options{S3: s3Server(srv), CacheDir: cache, GCGrace: testGrace})
				var res casckpt.SnapshotResult
				if err == nil {
					res, err = s.Snapshot(ctx, dir, casckpt.SnapshotOptions{Keep: 2})
				}
				clock.RUnlock()
				mu.Lock()
				switch {
				case err != nil && strings.Contains(err.Error(), "gc listed packs for deletion"):
					refused++
				case err != nil:
					errs[m] = err
				case res.Created:
					kept[res.ID] = taken{dir: dir, id: res.ID, files: files}
					for _, id := range res.Dropped {
						delete(kept, id)
					}
				}
				mu.Unlock()
				if errs[m] != nil {
					return
				}
				time.Sleep(150 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	close(done)
	for err := range gcErrs {
		t.Fatal(err)
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	_, during := tr.take()
	for range 2 { // the last pending list, then past the grace its deletions
		srv.Advance(testGrace + time.Second)
		if _, err := collector.GC(ctx); err != nil {
			t.Fatal(err)
		}
	}
	counts, deletes := tr.take()
	t.Logf("%d snapshots kept, %d refused cleanly; the collector deleted %d packs while the machines wrote, then made %v requests and deleted %d packs", len(kept), refused, len(during), counts, len(deletes))
	deletes = append(deletes, during...)
	if len(deletes) == 0 {
		t.Fatal("gc deleted no pack")
	}
	fresh := openGC(t, srv, url, nil)
	verifyClean(t, fresh)
	for _, k := range kept {
		os.RemoveAll(k.dir)
		os.MkdirAll(k.dir, 0o755)
		restoresExactly(t, fresh, k.dir, k.id, k.files)
	}
}

// fleetFiles writes n files named after seed into dir, their content made
// from seed and version.
func fleetFiles(t *testing.T, dir, seed string, version, n int) map[string][]byte {
	files := map[string][]byte{}
	for i := range n {
		var b bytes.Buffer
		for j := 0; b.Len() < 12000; j++ {
			fmt.Fprintf(&b, "%s v%d %d %d %x\n", seed, version, i, j, (j*7919+i+version)*2654435761)
		}
		name := fmt.Sprintf("%s-%d.txt", seed, i)
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Error(err)
		}
		files[name] = b.Bytes()
	}
	return files
}

// TestS3SlowWriterRechecks: a snapshot that runs over half the grace
// period lists gc's pack lists again before it commits: with none new it
// commits; when a gc listed packs meanwhile (here, the very packs its
// files sit in) it fails cleanly and commits nothing, and run again it
// stores its files anew and survives gc's second phase.
//
// A writer times its snapshot by this machine's clock, which no test can
// move: the writer's grace period is writerGrace, which its snapshot runs
// over half of in a pause of writerGrace; the collector's is testGrace,
// on the server's clock, which the test advances.
func TestS3SlowWriterRechecks(t *testing.T) {
	const writerGrace = 2 * time.Millisecond
	srv := s3test.Start(t)
	url := s3URL(srv)
	ctx := context.Background()
	a := openGC(t, srv, url, nil)
	dir := t.TempDir()
	old := writeFiles(t, dir, "old", 3)
	first, err := a.Snapshot(ctx, dir, casckpt.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	newer := writeFiles(t, dir, "new", 3)
	second, err := a.Snapshot(ctx, dir, casckpt.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Forget(ctx, dir, casckpt.Ref(first.ID.String())); err != nil {
		t.Fatal(err)
	}

	cacheW := t.TempDir()
	w := openGCIn(t, srv, url, cacheW, writerGrace)
	t.Cleanup(func() { checkVerifies(t, openGCIn(t, srv, url, cacheW, writerGrace)) })
	slowDir := t.TempDir()
	writeFiles(t, slowDir, "slow", 2)
	var once sync.Once
	pause := func(int64, int64) { once.Do(func() { time.Sleep(writerGrace) }) }
	if res, err := w.Snapshot(ctx, slowDir, casckpt.SnapshotOptions{Progress: pause}); err != nil || !res.Created {
		t.Fatalf("a slow snapshot with no gc meanwhile: %+v %v", res, err)
	}

	collector := openGC(t, srv, url, nil)
	dirW := t.TempDir()
	for name, data := range old {
		os.WriteFile(filepath.Join(dirW, name), data, 0o644)
	}
	once = sync.Once{}
	pause = func(int64, int64) {
		once.Do(func() {
			if _, err := collector.GC(ctx); err != nil { // lists the forgotten snapshot's pack
				t.Error(err)
			}
			time.Sleep(writerGrace)
		})
	}
	_, err = w.Snapshot(ctx, dirW, casckpt.SnapshotOptions{Progress: pause})
	if err == nil || !strings.Contains(err.Error(), "gc listed packs") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a snapshot overtaken by gc's first phase: %v", err)
	}
	if list, err := openGC(t, srv, url, nil).List(ctx, dirW, 0); err != nil || len(list) != 0 {
		t.Fatalf("the refused snapshot is listed: %+v %v", list, err)
	}
	again, err := openGCIn(t, srv, url, cacheW, writerGrace).Snapshot(ctx, dirW, casckpt.SnapshotOptions{}) // a command of its own
	if err != nil || again.Stored.Objects < 3 {
		t.Fatalf("run again: %+v %v (it must store its files anew)", again, err)
	}
	srv.Advance(testGrace + time.Second)
	if res, err := collector.GC(ctx); err != nil {
		t.Fatalf("gc's second phase: %+v %v", res, err)
	}
	fresh := openGC(t, srv, url, nil)
	restoresExactly(t, fresh, dirW, again.ID, old)
	restoresExactly(t, fresh, dir, second.ID, newer)
}

// TestS3GCLeaseHeld: gc refuses, deleting nothing, while another gc's
// lease is fresh, and runs once it is released.
func TestS3GCLeaseHeld(t *testing.T) {
	srv := s3test.Start(t)
	url := s3URL(srv)
	ctx := context.Background()
	s := openGC(t, srv, url, nil)
	dir := t.TempDir()
	writeFiles(t, dir, "a", 2)
	if _, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	key := strings.TrimPrefix(url, "s3://"+srv.Bucket+"/") + "/gc/lease"
	c := srv.Client(t)
	if _, err := c.PutObject(ctx, srv.Bucket, key, strings.NewReader("another gc\n"), -1, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GC(ctx); !errors.Is(err, casckpt.ErrRefused) || !strings.Contains(err.Error(), "another gc holds") {
		t.Fatalf("gc under another's lease: %v", err)
	}
	if err := c.RemoveObject(ctx, srv.Bucket, key, minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GC(ctx); err != nil {
		t.Fatalf("gc once the lease is gone: %v", err)
	}
	if keys := keysUnder(t, srv, key); len(keys) != 0 {
		t.Fatalf("gc left its lease behind: %v", keys)
	}
}

// TestS3GCRefusesIncompleteListing: a listing of commits that lacks one the
// cache read (here deleted behind its back) makes gc refuse and delete
// nothing.
func TestS3GCRefusesIncompleteListing(t *testing.T) {
	srv := s3test.Start(t)
	url := s3URL(srv)
	ctx := context.Background()
	s, err := casckpt.OpenURL(ctx, url, casckpt.Options{S3: s3Server(srv), CacheDir: t.TempDir(), GCGrace: testGrace})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFiles(t, dir, "a", 2)
	if _, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	prefix := strings.TrimPrefix(url, "s3://"+srv.Bucket+"/") + "/"
	commits := keysUnder(t, srv, prefix+"commits/")
	if err := srv.Client(t).RemoveObject(ctx, srv.Bucket, commits[0], minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	packs := packKeys(t, srv, url)
	_, err = s.GC(ctx)
	if err == nil || !strings.Contains(err.Error(), "looks incomplete") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("gc after a commit vanished: %v", err)
	}
	if got := packKeys(t, srv, url); !slices.Equal(got, packs) || len(keysUnder(t, srv, prefix+"dropped/packs/")) != 0 {
		t.Fatalf("gc wrote or deleted after refusing: packs %v, were %v", got, packs)
	}
}

// TestS3GCInterrupted: gc's second phase cut off after 1, 2, 4, ...
// requests fails with one line; the next runs complete, and every live
// snapshot restores from a new cache. The bucket is in memory: it cuts the
// requests, and the test advances its clock past the grace period.
func TestS3GCInterrupted(t *testing.T) {
	m := newMemBucket()
	ctx := context.Background()
	dir, cache := t.TempDir(), t.TempDir()
	var ids []casckpt.ID
	var trees []map[string][]byte
	a := m.open(t)
	for i := range 4 {
		os.RemoveAll(dir)
		os.MkdirAll(dir, 0o755)
		trees = append(trees, writeFiles(t, dir, fmt.Sprint("v", i), 2))
		res, err := a.Snapshot(ctx, dir, casckpt.SnapshotOptions{Keep: 2})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.ID)
	}
	gc := func(cut int) error { // from one cache, its requests cut after cut (< 0: none)
		s, err := casckpt.OpenBucket(m.url, m.Bucket, casckpt.Options{CacheDir: cache, GCGrace: memGrace})
		if err != nil {
			return err
		}
		m.FailAfter(cut)
		defer m.FailAfter(-1)
		_, err = s.GC(ctx)
		return err
	}
	if err := gc(-1); err != nil { // the first phase
		t.Fatal(err)
	}
	m.Advance(memGrace + time.Second)
	failed := 0
	for n := 1; n <= 64; n *= 2 {
		m.Advance(memGrace + time.Second) // the lease a cut gc left is stale: this one goes deeper
		if err := gc(n); err != nil {
			failed++
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("gc cut after %d requests: %q", n, err)
			}
		}
	}
	if failed == 0 {
		t.Fatal("no cut landed in a gc")
	}
	for range 3 { // an interrupted gc may leave its lease (stale after the grace period) and lists
		if err := gc(-1); err != nil && !errors.Is(err, casckpt.ErrRefused) {
			t.Fatal(err)
		}
		m.Advance(memGrace + time.Second)
	}
	if keys := m.Keys("packs/"); len(keys) != 2 {
		t.Errorf("packs left: %v, want the 2 of the kept snapshots", keys)
	}
	fresh := m.open(t)
	verifyClean(t, fresh)
	for i := 2; i < 4; i++ {
		restoresExactly(t, fresh, dir, ids[i], trees[i])
	}
}

// interruptedGC is a bucket whose gc has run its first phase over two
// dropped snapshots (of 4, keep 2), and whose server's clock has then
// passed the grace period: the next gc runs the second phase, which
// deletes.
type interruptedGC struct {
	srv   *s3test.Server
	url   string
	dir   string
	ids   []casckpt.ID
	trees []map[string][]byte
	cache string
}

func newInterruptedGC(t *testing.T) *interruptedGC {
	fx := &interruptedGC{srv: s3test.Start(t), dir: t.TempDir(), cache: t.TempDir()}
	fx.url = s3URL(fx.srv)
	a := openGC(t, fx.srv, fx.url, nil)
	for i := range 4 {
		os.RemoveAll(fx.dir)
		os.MkdirAll(fx.dir, 0o755)
		fx.trees = append(fx.trees, writeFiles(t, fx.dir, fmt.Sprint("v", i), 2))
		res, err := a.Snapshot(context.Background(), fx.dir, casckpt.SnapshotOptions{Keep: 2})
		if err != nil {
			t.Fatal(err)
		}
		fx.ids = append(fx.ids, res.ID)
	}
	if err := fx.gcWith(nil); err != nil { // the first phase
		t.Fatal(err)
	}
	fx.srv.Advance(testGrace + time.Second)
	return fx
}

// gcWith runs a gc from the fixture's one cache, its requests through tr
// (nil: straight), each tried once.
func (fx *interruptedGC) gcWith(tr http.RoundTripper) error {
	server := s3Server(fx.srv)
	server.MaxAttempts = 1
	ctx := context.Background()
	s, err := casckpt.OpenURL(ctx, fx.url, casckpt.Options{S3: server, CacheDir: fx.cache, S3Transport: tr, GCGrace: testGrace})
	if err != nil {
		return err
	}
	_, err = s.GC(ctx)
	return err
}

// completes checks that gcs after the interrupted ones finish the work:
// the kept snapshots' 2 packs are all that is left, verify is clean and
// both restore exactly from a new cache.
func (fx *interruptedGC) completes(t *testing.T) {
	for range 3 { // an interrupted gc may leave its lease (stale after the grace period) and lists
		if err := fx.gcWith(nil); err != nil && !errors.Is(err, casckpt.ErrRefused) {
			t.Fatal(err)
		}
		fx.srv.Advance(testGrace + time.Second)
	}
	if keys := packKeys(t, fx.srv, fx.url); len(keys) != 2 {
		t.Errorf("packs left: %v, want the 2 of the kept snapshots", keys)
	}
	fresh := openGC(t, fx.srv, fx.url, nil)
	verifyClean(t, fresh)
	for i := 2; i < 4; i++ {
		restoresExactly(t, fresh, fx.dir, fx.ids[i], fx.trees[i])
	}
}

// TestS3SnapshotCollectsWhenDue: on a bucket, a snapshot whose keep rule
// has dropped enough snapshots runs gc on its way out: the first time it
// lists the garbage, a later time, past the grace period, deletes it. The
// bucket is in memory: the test advances its clock.
func TestS3SnapshotCollectsWhenDue(t *testing.T) {
	m := newMemBucket()
	ctx := context.Background()
	s := m.open(t)
	dir := t.TempDir()
	var last casckpt.SnapshotResult
	var files map[string][]byte
	take := func(from, to int) {
		for i := from; i < to; i++ {
			files = writeFiles(t, dir, fmt.Sprint("v", i), 1)
			res, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{Keep: 1})
			if err != nil || !res.Created {
				t.Fatalf("snapshot %d: %+v %v", i, res, err)
			}
			last = res
		}
	}
	take(0, 9) // 8 drops
	if n := len(m.Keys("dropped/packs/pending/")); n != 1 {
		t.Fatalf("%d pending lists after 8 drops, want 1: the snapshot ran gc's first phase", n)
	}
	packs := len(m.Keys("packs/"))
	m.Advance(memGrace + time.Second)
	take(9, 17) // 8 more drops
	if n := len(m.Keys("packs/")); n >= packs+8 {
		t.Fatalf("%d packs, were %d before 8 more snapshots: the due gc deleted none", n, packs)
	}
	fresh := m.open(t)
	restoresExactly(t, fresh, dir, last.ID, files)
}
