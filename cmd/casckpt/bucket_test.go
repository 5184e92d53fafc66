package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/casckpt/casckpt/internal/s3test"
)

// requestCounter counts the requests that reach an S3 server through the
// proxy in front of it, by method.
type requestCounter struct {
	mu sync.Mutex
	n  map[string]int
	// commitsFrom is the start-after of the last listing of commits/.
	commitsFrom string
	// deletes are the paths of the packs deleted, in order.
	deletes []string
	// gets counts the GETs of each path.
	gets map[string]int
	// silent makes the proxy take requests and never answer, until
	// release is closed.
	silent  atomic.Bool
	release chan struct{}
}

// getsOf returns how many GETs asked for path.
func (c *requestCounter) getsOf(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gets[path]
}

func (c *requestCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

// listedFrom is the start-after of the last listing of commits/, read
// under the lock: a request of a process that just ended may still be in
// the proxy.
func (c *requestCounter) listedFrom() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.commitsFrom
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
	proxy.ErrorLog = log.New(io.Discard, "", 0) // a killed client's cut requests
	c := &requestCounter{n: map[string]int{}, gets: map[string]int{}, release: make(chan struct{})}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c.silent.Load() {
			select { // until the client gives up, or the test ends
			case <-r.Context().Done():
			case <-c.release:
			}
			return
		}
		c.mu.Lock()
		c.n[r.Method]++
		if r.Method == http.MethodGet {
			c.gets[r.URL.Path]++
		}
		if r.Method == http.MethodDelete && strings.HasSuffix(r.URL.Path, ".pack") {
			c.deletes = append(c.deletes, r.URL.Path)
		}
		if q := r.URL.Query(); q.Get("list-type") == "2" && strings.HasSuffix(q.Get("prefix"), "/commits/") {
			c.commitsFrom = q.Get("start-after")
		}
		c.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(c.release) }) // first
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
	bucket *requestCounter // nil: a local store
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
	{"repair", func(a *acceptance) {
		before := a.listIDs()
		doc := jsonOf[map[string]any](a.t, a.b.ok("repair", "--json").out)
		if doc["snapshots"] != 1.0 || !slices.Equal(a.listIDs(), before) {
			a.t.Fatalf("repair: %v; list %v, was %v", doc, a.listIDs(), before)
		}
	}},
	{"gc and prune", func(a *acceptance) {
		a.b.ok("gc")
		a.b.ok("prune")
		// The size cap, as locally: the pinned snapshot fits and stays.
		doc := jsonOf[map[string]any](a.t, a.b.ok("prune", "--max-size-mb", "1", "--json").out)
		if doc["snapshots_dropped"] != 0.0 || !slices.Equal(a.listIDs(), []string{a.ids["v1"] + "+pinned"}) {
			a.t.Fatalf("prune --max-size-mb 1: %v; list %v", doc, a.listIDs())
		}
	}},
}

// TestAcceptanceMatrix runs the contract's core commands through the
// built binary once with a local store and once with an s3:// store on a
// real versitygw, and logs the requests each step made of the bucket.
func TestAcceptanceMatrix(t *testing.T) {
	for _, bucket := range []bool{false, true} {
		name := map[bool]string{false: "local", true: "s3"}[bucket]
		t.Run(name, func(t *testing.T) {
			a := &acceptance{t: t, b: newBinEnv(t), dir: t.TempDir(), ids: map[string]string{}}
			if bucket {
				a.bucket = s3Env(t, a.b, s3test.Start(t))
			}
			requests := map[string]int{}
			for _, step := range acceptanceSteps {
				step.run(a)
				if a.bucket != nil {
					n := a.bucket.take()
					requests[step.name] = total(n)
					t.Logf("%-20s requests %v, commits listed after %q", step.name, n, a.bucket.listedFrom())
					// Past the first commands, a listing starts at the
					// watermark, not at the first commit.
					if step.name == "verify" && !strings.Contains(a.bucket.listedFrom(), "/commits/") {
						t.Errorf("verify listed the commits from %q", a.bucket.listedFrom())
					}
				}
			}
			// A no-change snapshot lists commits, dropped markers and pins:
			// nothing more, whatever the store holds.
			if bucket && requests["snapshot unchanged"] != 3 {
				t.Errorf("a no-change snapshot made %d requests, want 3", requests["snapshot unchanged"])
			}
		})
	}
}

// storeView is what a machine sees of a project: its list (IDs, pins,
// labels) and its turns.
func storeView(t *testing.T, b *binEnv, dir string) (list, turns string) {
	t.Helper()
	var l []string
	for _, s := range jsonOf[[]map[string]any](t, b.ok("list", dir, "--json").out) {
		l = append(l, fmt.Sprint(s["id"], s["pinned"], s["reason"], s["session"], s["turn"]))
	}
	var tr []string
	for _, s := range jsonOf[[]map[string]any](t, b.ok("turns", dir, "--json").out) {
		tr = append(tr, fmt.Sprint(s["turn"], s["start"], s["end"], s["dropped"]))
	}
	return strings.Join(l, "\n"), strings.Join(tr, "\n")
}

// TestS3CacheDeletedIsRebuilt: deleting the cache loses nothing: the next
// command rebuilds it from the bucket and lists, restores and verifies the
// same; repair rebuilds it too.
func TestS3CacheDeletedIsRebuilt(t *testing.T) {
	b := newBinEnv(t)
	counter := s3Env(t, b, s3test.Start(t))
	dir := t.TempDir()
	var ids []string
	for i, text := range []string{"one\n", "two\n", "three\n"} {
		writeFiles(t, dir, map[string]string{"f.txt": text, "big.bin": strings.Repeat(text, 1000)})
		doc := jsonOf[map[string]any](t, b.ok("snapshot", dir, "-m", "step "+text, "--session", "s1", "--turn", fmt.Sprint("t", i), "--json").out)
		ids = append(ids, doc["id"].(string))
	}
	b.ok("snapshot", dir, "--session", "s1", "--turn", "t2", "--end-turn")
	b.ok("pin", dir, ids[0])
	b.ok("forget", dir, ids[1])
	cache := filepath.Join(b.home, "cache")
	for _, rebuild := range []string{"delete", "repair"} {
		list, turns := storeView(t, b, dir)
		if rebuild == "delete" {
			if err := os.RemoveAll(cache); err != nil {
				t.Fatal(err)
			}
		} else {
			b.ok("repair")
		}
		counter.take()
		gotList, gotTurns := storeView(t, b, dir)
		t.Logf("%s: list and turns on the rebuilt cache: requests %v", rebuild, counter.take())
		if gotList != list || gotTurns != turns {
			t.Fatalf("after %s, list\n%s\nturns\n%s\nwant\n%s\n%s", rebuild, gotList, gotTurns, list, turns)
		}
		b.ok("restore", dir, ids[0])
		if got, _ := os.ReadFile(filepath.Join(dir, "big.bin")); string(got) != strings.Repeat("one\n", 1000) {
			t.Fatalf("after %s, restore gave big.bin of %d bytes", rebuild, len(got))
		}
		t.Logf("%s: restore: requests %v", rebuild, counter.take())
		if v := jsonOf[map[string]any](t, b.ok("verify", "--json").out); len(v["damaged"].([]any)) != 0 {
			t.Fatalf("verify after %s: %v", rebuild, v)
		}
		b.ok("snapshot", dir) // the restored tree
		counter.take()
		b.ok("snapshot", dir)
		if n := counter.take(); total(n) != 3 {
			t.Fatalf("after %s, a no-change snapshot made requests %v, want 3 listings", rebuild, n)
		}
		// The listing starts near the newest commit (the cache's own), not
		// at the first: its length does not grow with the store.
		if !strings.Contains(counter.listedFrom(), "/commits/") {
			t.Fatalf("after %s, commits are listed from %q, not from the watermark", rebuild, counter.listedFrom())
		}
	}
	st := jsonOf[map[string]any](t, b.ok("status", "--json").out)
	if !strings.HasPrefix(st["store"].(string), "s3://") || st["size_bytes"].(float64) <= 0 {
		t.Fatalf("status: %v", st)
	}
}

// TestS3TwoMachines: two caches snapshot different projects into one
// bucket; each sees the other's snapshots, pins and drops. Both are one
// machine (the ID made from this host); TestS3TwoMachinesOnePath has two.
func TestS3TwoMachines(t *testing.T) {
	srv := s3test.Start(t)
	a, b := newBinEnv(t), newBinEnv(t)
	s3Env(t, a, srv)
	s3Env(t, b, srv)
	b.extra = append(b.extra, a.extra[len(a.extra)-2]) // the same store URL; b's own cache
	pa, pb := t.TempDir(), t.TempDir()
	writeFiles(t, pa, map[string]string{"a.txt": "from a\n", "shared.txt": "same\n"})
	writeFiles(t, pb, map[string]string{"b.txt": "from b\n", "shared.txt": "same\n"})
	ida := jsonOf[map[string]any](t, a.ok("snapshot", pa, "--json").out)["id"].(string)
	idb := jsonOf[map[string]any](t, b.ok("snapshot", pb, "--json").out)["id"].(string)
	if out := a.ok("cat", pb, idb, "b.txt").out; out != "from b\n" {
		t.Fatalf("machine a reads b's snapshot: %q", out)
	}
	if out := b.ok("cat", pa, ida, "a.txt").out; out != "from a\n" {
		t.Fatalf("machine b reads a's snapshot: %q", out)
	}
	b.ok("pin", pa, ida)
	writeFiles(t, pb, map[string]string{"b.txt": "b again\n"})
	idb2 := jsonOf[map[string]any](t, b.ok("snapshot", pb, "--json").out)["id"].(string)
	a.ok("forget", pb, idb)
	for _, m := range []*binEnv{a, b} {
		la := jsonOf[[]map[string]any](t, m.ok("list", pa, "--json").out)
		lb := jsonOf[[]map[string]any](t, m.ok("list", pb, "--json").out)
		if len(la) != 1 || la[0]["id"] != ida || la[0]["pinned"] != true || len(lb) != 1 || lb[0]["id"] != idb2 {
			t.Fatalf("a machine sees %v and %v", la, lb)
		}
		if v := jsonOf[map[string]any](t, m.ok("verify", "--json").out); v["snapshots_checked"] != 2.0 || len(v["damaged"].([]any)) != 0 {
			t.Fatalf("verify: %v", v)
		}
	}
}

// TestS3KilledSnapshotLeavesNoDanglingCommit kills snapshots of a tree of
// several packs with SIGKILL at growing delays, in the middle of their
// uploads; after each, a fresh cache (a new machine) lists the bucket:
// every snapshot it finds verifies, so no commit names a missing pack.
func TestS3KilledSnapshotLeavesNoDanglingCommit(t *testing.T) {
	srv := s3test.Start(t)
	b := newBinEnv(t)
	s3Env(t, b, srv)
	dir := t.TempDir()
	killed, completed := 0, 0
	// The delay grows until a snapshot completes before its kill: the
	// kills before it land in the scan, the uploads and the commit.
	delay := 20 * time.Millisecond
	for i := 0; i < 12 && (completed == 0 || killed < 3); i, delay = i+1, delay*2 {
		files := map[string]string{}
		for j := range 12 {
			buf := make([]byte, 1<<20)
			rand.Read(buf)
			files[fmt.Sprintf("r%d/f%d.bin", i, j)] = string(buf)
		}
		writeFiles(t, dir, files)
		c := b.command("snapshot", dir, "--max-size-mb", "0")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		c.Process.Kill()
		if err := c.Wait(); err == nil {
			completed++
		} else {
			killed++
		}
		fresh := &binEnv{t: t, bin: b.bin, home: t.TempDir(), extra: slices.Clone(b.extra)}
		fresh.extra = append(fresh.extra, "XDG_CACHE_HOME="+filepath.Join(fresh.home, "cache"))
		if v := jsonOf[map[string]any](t, fresh.ok("verify", "--json").out); len(v["damaged"].([]any)) != 0 {
			t.Fatalf("after a kill at %v: verify on a fresh cache: %v", delay, v)
		}
	}
	t.Logf("%d snapshots killed, %d completed", killed, completed)
	if completed == 0 || killed == 0 {
		t.Fatalf("%d snapshots killed, %d completed: the kills missed a window", killed, completed)
	}
	b.ok("snapshot", dir)
	if v := jsonOf[map[string]any](t, b.ok("verify", "--json").out); len(v["damaged"].([]any)) != 0 || v["snapshots_checked"].(float64) < 1 {
		t.Fatalf("verify after the last snapshot: %v", v)
	}
}

// TestS3ServerKilledMidSnapshot: the server killed while a snapshot
// uploads, and down for the next commands: each fails with one line and
// records nothing that a fresh cache finds damaged; once the server is
// back, the next snapshot completes and the store verifies.
func TestS3ServerKilledMidSnapshot(t *testing.T) {
	srv := s3test.Start(t)
	b := newBinEnv(t)
	s3Env(t, b, srv)
	b.extra = append(b.extra, "AWS_MAX_ATTEMPTS=2")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"small.txt": "first\n"})
	b.ok("snapshot", dir)
	files := map[string]string{}
	for j := range 16 {
		buf := make([]byte, 1<<20)
		rand.Read(buf)
		files[fmt.Sprintf("big/f%d.bin", j)] = string(buf)
	}
	writeFiles(t, dir, files)
	var out strings.Builder
	c := b.command("snapshot", dir)
	c.Stderr = &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond)
	srv.Stop()
	err := c.Wait()
	t.Logf("the snapshot the kill met: %v: %s", err, out.String())
	if err != nil {
		if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "casckpt: ") {
			t.Fatalf("a snapshot cut off from its server printed %q", out.String())
		}
	}
	for _, args := range [][]string{{"snapshot", dir}, {"list", dir}} {
		failsWith(t, b.run(args...), 1, "s3 store")
	}
	srv.Restart()
	b.ok("snapshot", dir)
	fresh := &binEnv{t: t, bin: b.bin, home: t.TempDir(), extra: slices.Clone(b.extra)}
	fresh.extra = append(fresh.extra, "XDG_CACHE_HOME="+filepath.Join(fresh.home, "cache"))
	v := jsonOf[map[string]any](t, fresh.ok("verify", "--json").out)
	if len(v["damaged"].([]any)) != 0 || v["snapshots_checked"].(float64) < 2 {
		t.Fatalf("verify on a fresh cache after the server came back: %v", v)
	}
	if got := fresh.ok("cat", dir, "@1", "big/f3.bin").out; got != files["big/f3.bin"] {
		t.Fatalf("the newest snapshot's big/f3.bin has %d bytes", len(got))
	}
}
