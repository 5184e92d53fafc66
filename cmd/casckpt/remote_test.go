package main

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/casckpt/casckpt/internal/s3test"
)

// requestCounter counts the requests that reach an S3 server through the
// proxy in front of it, by method.
type requestCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *requestCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

func total(n map[string]int) int {
	t := 0
	for _, v := range n {
		t += v
	}
	return t
}

// s3Env makes b's store a fresh prefix of srv's bucket, reached through
// a proxy that counts the requests, with its cache under b's home.
func s3Env(t *testing.T, b *binEnv, srv *s3test.Server) *requestCounter {
	t.Helper()
	target, _ := url.Parse(srv.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	c := &requestCounter{n: map[string]int{}}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.n[r.Method]++
		c.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	var id [6]byte
	rand.Read(id[:])
	b.extra = append(srv.Env(), "AWS_ENDPOINT_URL="+ts.URL, "CASCKPT_HOME=s3://"+srv.Bucket+"/t-"+hex.EncodeToString(id[:]),
		"XDG_CACHE_HOME="+filepath.Join(b.home, "cache"))
	return c
}

// acceptance is one run of the acceptance matrix: a store, local or in a
// bucket, and a project directory.
type acceptance struct {
	t      *testing.T
	b      *binEnv
	dir    string
	remote *requestCounter // nil: a local store
	ids    map[string]string
}

func (a *acceptance) snapshot(name string, files map[string]string, created bool) {
	a.t.Helper()
	writeFiles(a.t, a.dir, files)
	doc := jsonOf[map[string]any](a.t, a.b.ok("snapshot", a.dir, "--json").out)
	if doc["created"] != created {
		a.t.Fatalf("snapshot %s: created %v, want %v", name, doc["created"], created)
	}
	a.ids[name] = doc["id"].(string)
}

func (a *acceptance) listIDs() []string {
	a.t.Helper()
	var ids []string
	for _, s := range jsonOf[[]map[string]any](a.t, a.b.ok("list", a.dir, "--json").out) {
		id := s["id"].(string)
		if s["pinned"] == true {
			id += "+pinned"
		}
		ids = append(ids, id)
	}
	return ids
}

// acceptanceSteps is the matrix's one table: each step runs against a
// local store and against an s3:// store alike.
var acceptanceSteps = []struct {
	name string
	run  func(a *acceptance)
}{
	{"snapshot", func(a *acceptance) {
		a.snapshot("v1", map[string]string{"f.txt": "one\n", "d/g.bin": "\x00g"}, true)
	}},
	{"snapshot unchanged", func(a *acceptance) {
		a.snapshot("again", nil, false)
		if a.ids["again"] != a.ids["v1"] {
			a.t.Fatalf("unchanged tree gave %s, want %s", a.ids["again"], a.ids["v1"])
		}
	}},
	{"snapshot changed", func(a *acceptance) {
		a.snapshot("v2", map[string]string{"f.txt": "two\n"}, true)
	}},
	{"list", func(a *acceptance) {
		if got := a.listIDs(); !slices.Equal(got, []string{a.ids["v2"], a.ids["v1"]}) {
			a.t.Fatalf("list %v", got)
		}
	}},
	{"diff", func(a *acceptance) {
		doc := jsonOf[map[string]any](a.t, a.b.ok("diff", a.dir, a.ids["v1"], a.ids["v2"], "--json").out)
		if doc["files_changed"] != 1.0 || doc["insertions"] != 1.0 || doc["deletions"] != 1.0 {
			a.t.Fatalf("diff: %v", doc)
		}
	}},
	{"cat and ls", func(a *acceptance) {
		if out := a.b.ok("cat", a.dir, a.ids["v1"], "f.txt").out; out != "one\n" {
			a.t.Fatalf("cat: %q", out)
		}
		if ls := jsonOf[[]map[string]any](a.t, a.b.ok("ls", a.dir, "@1", "--json").out); len(ls) != 3 {
			a.t.Fatalf("ls: %v", ls)
		}
	}},
	{"restore", func(a *acceptance) {
		a.b.ok("restore", a.dir, a.ids["v1"])
		if b, _ := os.ReadFile(filepath.Join(a.dir, "f.txt")); string(b) != "one\n" {
			a.t.Fatalf("restored f.txt is %q", b)
		}
	}},
	{"pin and forget", func(a *acceptance) {
		a.b.ok("pin", a.dir, a.ids["v1"])
		a.b.ok("forget", a.dir, a.ids["v2"])
		if got := a.listIDs(); !slices.Equal(got, []string{a.ids["v1"] + "+pinned"}) {
			a.t.Fatalf("after pin and forget: %v", got)
		}
	}},
	{"verify", func(a *acceptance) {
		v := jsonOf[map[string]any](a.t, a.b.ok("verify", "--json").out)
		if v["snapshots_checked"] != 1.0 || len(v["damaged"].([]any)) != 0 {
			a.t.Fatalf("verify: %v", v)
		}
	}},
	{"gc", func(a *acceptance) {
		if a.remote == nil {
			a.b.ok("gc")
			return
		}
		failsWith(a.t, a.b.run("gc"), 1, "not supported yet on an s3:// store")
	}},
}

// TestAcceptanceMatrix runs the contract's core commands through the
// built binary once with a local store and once with an s3:// store on a
// real versitygw, and logs the requests each step made of the bucket.
func TestAcceptanceMatrix(t *testing.T) {
	for _, remote := range []bool{false, true} {
		name := map[bool]string{false: "local", true: "s3"}[remote]
		t.Run(name, func(t *testing.T) {
			a := &acceptance{t: t, b: newBinEnv(t), dir: t.TempDir(), ids: map[string]string{}}
			if remote {
				a.remote = s3Env(t, a.b, s3test.Start(t))
			}
			requests := map[string]int{}
			for _, step := range acceptanceSteps {
				step.run(a)
				if a.remote != nil {
					n := a.remote.take()
					requests[step.name] = total(n)
					t.Logf("%-20s requests %v", step.name, n)
				}
			}
			// A no-change snapshot lists commits, dropped markers and pins:
			// nothing more, whatever the store holds.
			if remote && requests["snapshot unchanged"] != 3 {
				t.Errorf("a no-change snapshot made %d requests, want 3", requests["snapshot unchanged"])
			}
		})
	}
}
