package casckpt_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

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
	fx := newInterruptedGC(t)
	killed := 0
	// Kills at 1, 2, 4, 8, 16, then every other request, until a gc ends
	// before its kill: the deletions come late in the second phase, and
	// each killed gc starts again from the lease.
	for n := 1; ; n = min(2*n, n+2) {
		k := &killingTransport{srv: fx.srv, n: n}
		err := fx.gcWith(k)
		if k.done {
			killed++
			if err == nil || strings.Contains(err.Error(), "\n") {
				t.Fatalf("gc whose server was killed at request %d: %q, want one line", n, err)
			}
			fx.srv.Restart()
			fx.srv.Advance(testGrace + time.Second) // its lease goes stale: the next gc goes deeper
		}
		t.Logf("killed at request %d: %v", n, err)
		if !k.done {
			break
		}
	}
	if killed == 0 {
		t.Fatal("no kill landed in a gc")
	}
	fx.completes(t)
}
