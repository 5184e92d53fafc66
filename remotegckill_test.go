package casckpt_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/s3test"
)

// killingTransport passes requests to the server and, at the n-th, kills
// the server (SIGKILL of its process) before that request goes out: gc
// meets a server that died under it, with whatever it had half written.
type killingTransport struct {
	srv  *s3test.Server
	mu   sync.Mutex
	n    int
	done bool
}

func (k *killingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	k.mu.Lock()
	k.n--
	if k.n == 0 {
		k.srv.Stop()
		k.done = true
	}
	k.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// TestS3GCServerKilled: the server killed at the 1st, 2nd, 4th, ...
// request of a gc that runs the second phase (the one that deletes), then
// restarted:
// the gc that met it fails with one line, nothing a kept snapshot needs is
// lost, and the next runs complete: the dropped snapshots' packs are
// gone and every kept snapshot restores exactly from a new cache.
func TestS3GCServerKilled(t *testing.T) {
	srv := s3test.Start(t)
	url := s3URL(srv)
	ctx := context.Background()
	a := openGC(t, srv, url, nil)
	dir := t.TempDir()
	var ids []casckpt.ID
	var trees []map[string][]byte
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
	cache := t.TempDir()
	getenv := func(k string) string {
		if k == "AWS_MAX_ATTEMPTS" {
			return "1"
		}
		return srv.Getenv(k)
	}
	gcWith := func(tr http.RoundTripper) error {
		s, err := casckpt.OpenURL(ctx, url, casckpt.Options{Getenv: getenv, CacheDir: cache, S3Transport: tr, GCGrace: testGrace})
		if err != nil {
			return err
		}
		_, err = s.GC(ctx)
		return err
	}
	if err := gcWith(nil); err != nil { // the first phase
		t.Fatal(err)
	}
	time.Sleep(testGrace + time.Second)
	killed := 0
	// Kills at 1, 2, 4, 8, 16, then every other request, until a gc ends
	// before its kill: the deletions come late in the second phase, and
	// each killed gc starts again from the lease.
	for n := 1; ; n = min(2*n, n+2) {
		k := &killingTransport{srv: srv, n: n}
		err := gcWith(k)
		if k.done {
			killed++
			if err == nil || strings.Contains(err.Error(), "\n") {
				t.Fatalf("gc whose server was killed at request %d: %q, want one line", n, err)
			}
			srv.Restart()
			time.Sleep(testGrace + time.Second) // its lease goes stale: the next gc goes deeper
		}
		t.Logf("killed at request %d: %v", n, err)
		if !k.done {
			break
		}
	}
	if killed == 0 {
		t.Fatal("no kill landed in a gc")
	}
	for range 3 { // a killed gc may leave its lease (stale after the grace period) and lists
		if err := gcWith(nil); err != nil && !errors.Is(err, casckpt.ErrRefused) {
			t.Fatal(err)
		}
		time.Sleep(testGrace + time.Second)
	}
	if keys := packKeys(t, srv, url); len(keys) != 2 {
		t.Errorf("packs left: %v, want the 2 of the kept snapshots", keys)
	}
	fresh := openGC(t, srv, url, nil)
	verifyClean(t, fresh)
	for i := 2; i < 4; i++ {
		restoresExactly(t, fresh, dir, ids[i], trees[i])
	}
}
