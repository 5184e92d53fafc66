package casckpt_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/s3test"
	"github.com/casckpt/casckpt/internal/s3test/membucket"
)

// TestS3TwoGCsAtOnce: two gcs with caches of their own run in a loop at
// once on one bucket, each as if it held the lease (each takes a lease key
// of its own), while two machines snapshot overlapping projects under a
// keep rule. Afterwards every snapshot that reported success and was not
// dropped restores byte-exact from a new cache, the store verifies clean,
// and the gcs did delete packs: the two phases alone keep two gcs safe.
// After each round a writer moves the server's clock on by a quarter of
// the grace period, while no snapshot runs (a snapshot times itself by
// this machine's clock, which does not move, from its sync): the gcs'
// second phases delete while the writers write.
func TestS3TwoGCsAtOnce(t *testing.T) {
	casckpt.SeparateGCLeases(t)
	srv := s3test.Start(t)
	url := s3URL(srv)
	ctx := context.Background()
	type taken struct {
		dir   string
		files map[string][]byte
	}
	var (
		mu   sync.Mutex
		kept = map[casckpt.ID]taken{}
		// clock is held shared by each snapshot and exclusively to
		// advance the server's clock between snapshots.
		clock sync.RWMutex
	)
	trs := []*countingTransport{{}, {}}
	collectors := []*casckpt.Store{openGC(t, srv, url, trs[0]), openGC(t, srv, url, trs[1])}
	done := make(chan struct{})
	var gcs sync.WaitGroup
	gcErrs := make([]error, len(collectors))
	for i, c := range collectors {
		gcs.Add(1)
		go func() {
			defer gcs.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := c.GC(ctx); err != nil {
					gcErrs[i] = fmt.Errorf("gc %d: %w", i, err)
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		}()
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for m := range errs {
		dir, cache := t.TempDir(), t.TempDir()
		t.Cleanup(func() { checkVerifies(t, openGCIn(t, srv, url, cache, testGrace)) })
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 8 {
				files := fleetFiles(t, dir, "common", round/2, 3) // shared by both machines
				for name, data := range fleetFiles(t, dir, fmt.Sprint("own", m), round, 2) {
					files[name] = data
				}
				// Each round is a command of its own (a store opened on
				// the machine's cache), which syncs with the bucket
				// after the clock last moved.
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
				case err != nil:
					errs[m] = err
				case res.Created:
					kept[res.ID] = taken{dir: dir, files: files}
					for _, id := range res.Dropped {
						delete(kept, id)
					}
				}
				mu.Unlock()
				if errs[m] != nil {
					return
				}
				clock.Lock()
				srv.Advance(testGrace / 4)
				clock.Unlock()
			}
		}()
	}
	wg.Wait()
	close(done)
	gcs.Wait()
	for _, err := range append(errs, gcErrs...) {
		if err != nil {
			t.Fatal(err)
		}
	}
	for range 2 { // the last pending lists, then past the grace their deletions, both gcs at once
		srv.Advance(testGrace + time.Second)
		for i, c := range collectors {
			gcs.Add(1)
			go func() {
				defer gcs.Done()
				_, gcErrs[i] = c.GC(ctx)
			}()
		}
		gcs.Wait()
		for _, err := range gcErrs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	var deleted []string
	for i, tr := range trs {
		counts, deletes := tr.take()
		t.Logf("gc %d made %v requests and deleted %d packs", i, counts, len(deletes))
		deleted = append(deleted, deletes...)
	}
	if len(deleted) == 0 {
		t.Fatal("the gcs deleted no pack")
	}
	for _, key := range packKeys(t, srv, url) {
		if slices.ContainsFunc(deleted, func(d string) bool { return strings.HasSuffix(d, key) }) {
			t.Fatalf("pack %s deleted and still listed", key)
		}
	}
	fresh := openGC(t, srv, url, nil)
	verifyClean(t, fresh)
	t.Logf("%d snapshots kept", len(kept))
	for id, k := range kept {
		os.RemoveAll(k.dir)
		os.MkdirAll(k.dir, 0o755)
		restoresExactly(t, fresh, k.dir, id, k.files)
	}
}

// TestS3GCStaleLease: a lease left by a gc that died is refused while it
// is younger than the lease TTL (the grace period, at most 10 minutes) by
// the server's clock, and taken over once older: that gc runs, and
// releases the lease. The bucket is in memory: the test advances its
// clock.
func TestS3GCStaleLease(t *testing.T) {
	m := newMemBucket()
	ctx := context.Background()
	s := m.open(t)
	dir := t.TempDir()
	writeFiles(t, dir, "a", 2)
	if _, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := m.PutNew(ctx, "gc/lease", []byte("casckpt gc of a dead sandbox\n")); err != nil {
		t.Fatal(err)
	}
	m.Advance(10*time.Minute - time.Second)
	if _, err := s.GC(ctx); !errors.Is(err, casckpt.ErrRefused) || !strings.Contains(err.Error(), "another gc holds") {
		t.Fatalf("gc under a young lease: %v", err)
	}
	m.Advance(2 * time.Second)
	if _, err := s.GC(ctx); err != nil {
		t.Fatalf("gc under a lease older than its TTL: %v", err)
	}
	if keys := m.Keys("gc/lease"); len(keys) != 0 {
		t.Fatalf("gc left the lease it took over: %v", keys)
	}
}

// leaseThief replaces the lease behind gc's back (as a gc that took it
// over would) just before gc's first renewal reaches the bucket.
type leaseThief struct {
	*membucket.Bucket
	once    sync.Once
	renewed bool
}

func (l *leaseThief) PutIfMatch(ctx context.Context, rel, etag string, data []byte) error {
	if rel == "gc/lease" {
		l.once.Do(func() {
			l.renewed = true
			if err := l.Delete(ctx, rel); err != nil {
				panic(err)
			}
			if err := l.PutNew(ctx, rel, []byte("casckpt gc that took over\n")); err != nil {
				panic(err)
			}
		})
	}
	return l.Bucket.PutIfMatch(ctx, rel, etag, data)
}

// TestS3GCLostLeaseStops: a gc whose renewal of its lease fails (another
// gc took it over) stops before it writes a deleted list or deletes a
// pack, and leaves the other gc's lease alone. The bucket is in memory:
// the test advances its clock past the grace period.
func TestS3GCLostLeaseStops(t *testing.T) {
	m := newMemBucket()
	ctx := context.Background()
	a := m.open(t)
	dir := t.TempDir()
	for i := range 2 {
		writeFiles(t, dir, fmt.Sprint("v", i), 2)
		if _, err := a.Snapshot(ctx, dir, casckpt.SnapshotOptions{Keep: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.GC(ctx); err != nil { // the first phase lists the dropped snapshot's pack
		t.Fatal(err)
	}
	pending := m.Keys("dropped/packs/pending/")
	if len(pending) != 1 {
		t.Fatalf("pending lists %v, want 1", pending)
	}
	packs := m.Keys("packs/")
	m.Advance(memGrace + time.Second)
	thief := &leaseThief{Bucket: m.Bucket}
	_, err := m.openOver(t, thief).GC(ctx)
	if !thief.renewed || err == nil || !strings.Contains(err.Error(), "renew the lease") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("gc that lost its lease: %v (renewal seen: %v)", err, thief.renewed)
	}
	if got := m.Keys("packs/"); !slices.Equal(got, packs) {
		t.Fatalf("packs went from %v to %v", packs, got)
	}
	if keys := m.Keys("dropped/packs/deleted/"); len(keys) != 0 {
		t.Fatalf("a deleted list was written: %v", keys)
	}
	if got := m.Keys("dropped/packs/pending/"); !slices.Equal(got, pending) {
		t.Fatalf("pending lists went from %v to %v", pending, got)
	}
	if b := m.get(t, "gc/lease"); string(b) != "casckpt gc that took over\n" {
		t.Fatalf("the other gc's lease holds %q", b)
	}
}
