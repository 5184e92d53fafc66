//go:build linux

package bench

import (
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/casckpt/casckpt/internal/s3test"
)

// The bucket benchmarks (BenchmarkCmdS3*, #14) run casckpt-cmd with
// --store s3://BUCKET/PREFIX and restic with its S3 backend against one
// versitygw per benchmark, both through a proxy on 127.0.0.1 that counts
// the requests of each timed step by kind, so that the counts compare.

// requestKinds are the columns of the request table: LIST is a GET of the
// bucket itself (a listing), GET one of an object.
var requestKinds = []string{"LIST", "GET", "HEAD", "PUT", "POST", "DELETE"}

// bucketBench is the server of a bucket benchmark: versitygw behind a
// counting proxy.
type bucketBench struct {
	srv   *s3test.Server
	proxy string // the proxy's URL, the endpoint every peer is given
	mu    sync.Mutex
	n     map[string]int // requests by kind since the last take
	by    map[string]int // requests by kind and key class since the last take
	up    int64          // bytes of request bodies since the last take
	down  int64          // bytes of response bodies since the last take
	// busy is the time requests spent in the proxy since the last take,
	// summed (parallel requests overlap), and busyPut that of the PUTs.
	busy, busyPut time.Duration
	inflight      int // requests the proxy has not finished
	// serverPID is versitygw's process (0: not found); serverCPU its CPU
	// time at the last take.
	serverPID int
	serverCPU time.Duration
}

// startBucket starts versitygw (skipping where it is not installed) and
// the counting proxy in front of it; both stop when b ends.
func startBucket(b *testing.B) *bucketBench {
	k := &bucketBench{srv: s3test.Start(b), n: map[string]int{}, by: map[string]int{}}
	target, _ := url.Parse(k.srv.URL())
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ErrorLog = log.New(io.Discard, "", 0)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k.mu.Lock()
		kind := requestKind(r)
		k.n[kind]++
		k.by[kind+" "+keyClass(r)]++
		k.up += max(r.ContentLength, 0)
		k.inflight++
		k.mu.Unlock()
		start := time.Now()
		cw := &countingWriter{ResponseWriter: w}
		rp.ServeHTTP(cw, r)
		d := time.Since(start)
		k.mu.Lock()
		k.down += cw.n
		k.busy += d
		if r.Method == http.MethodPut {
			k.busyPut += d
		}
		k.inflight--
		k.mu.Unlock()
	}))
	b.Cleanup(ts.Close)
	k.proxy = ts.URL
	k.serverPID = childWith(k.srv.Endpoint)
	k.serverCPU = procCPU(k.serverPID)
	return k
}

// childWith returns the process ID of this process's child whose command
// line holds arg, or 0.
func childWith(arg string) int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(d))
		cmdline, err := os.ReadFile(d + "/cmdline")
		if err != nil || !strings.Contains(string(cmdline), arg) {
			continue
		}
		if f := procStat(pid); len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) {
			return pid
		}
	}
	return 0
}

// procStat returns the fields of /proc/PID/stat after the command name
// (state first, then the parent's ID, ...), or nil.
func procStat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	_, rest, ok := strings.Cut(string(b), ") ")
	if !ok {
		return nil
	}
	return strings.Fields(rest)
}

// procCPU returns the user+system time of process pid (Linux's clock
// ticks of 10 ms), or 0.
func procCPU(pid int) time.Duration {
	f := procStat(pid)
	if pid == 0 || len(f) < 13 {
		return 0
	}
	user, _ := strconv.ParseInt(f[11], 10, 64)
	sys, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(user+sys) * 10 * time.Millisecond
}

// countingWriter counts the bytes of a response body.
type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (w *countingWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.n += int64(n)
	return n, err
}

// Unwrap lets the proxy's http.ResponseController flush the answer.
func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// requestKind is r's column in the request table.
func requestKind(r *http.Request) string {
	bucketLevel := !strings.Contains(strings.Trim(r.URL.Path, "/"), "/")
	if r.Method == http.MethodGet && (r.URL.Query().Has("list-type") || bucketLevel && !r.URL.Query().Has("location")) {
		return "LIST"
	}
	return r.Method
}

// keyClass is the first directory under the store's prefix of the key r
// names or lists ("packs", "commits"; restic's "data", "index"), or "-".
func keyClass(r *http.Request) string {
	key := r.URL.Query().Get("prefix")
	if key == "" {
		// path style: /BUCKET/PREFIX/CLASS/...
		if parts := strings.SplitN(strings.Trim(r.URL.Path, "/"), "/", 2); len(parts) == 2 {
			key = parts[1]
		}
	}
	if parts := strings.Split(key, "/"); len(parts) > 1 && parts[1] != "" {
		class, _, _ := strings.Cut(parts[1], "-") // casckpt's probe-RANDOM
		return class
	}
	return "-"
}

// take returns the requests, uploaded bytes and request time counted
// since the last take, once the proxy has finished every request (a
// process that has exited has read its last answer, which the proxy may
// not have finished accounting for).
func (k *bucketBench) take() requests {
	k.mu.Lock()
	defer k.mu.Unlock()
	for i := 0; k.inflight > 0 && i < 1000; i++ {
		k.mu.Unlock()
		time.Sleep(time.Millisecond)
		k.mu.Lock()
	}
	cpu := procCPU(k.serverPID)
	r := requests{n: k.n, by: k.by, up: k.up, down: k.down, busy: k.busy, busyPut: k.busyPut, server: cpu - k.serverCPU}
	k.serverCPU = cpu
	k.n, k.by, k.up, k.down, k.busy, k.busyPut = map[string]int{}, map[string]int{}, 0, 0, 0, 0
	return r
}

// requests is what one step asked of the bucket.
type requests struct {
	n, by         map[string]int
	up, down      int64
	busy, busyPut time.Duration
	server        time.Duration // versitygw's CPU time
}

func (r requests) total() int {
	t := 0
	for _, v := range r.n {
		t += v
	}
	return t
}

// s3Peer makes peer name with a fresh store under prefix of k's bucket:
// casckpt-cmd with a cache of its own, restic with its repository
// initialised (untimed) and its own cache, as its users run it; or, for
// casckpt-local, the command with a local store: the same steps without
// the bucket, for reference.
func s3Peer(b *testing.B, k *bucketBench, name, prefix string) *hostPeer {
	dir := filepath.Join(k.srv.Dir, k.srv.Bucket, prefix) // the posix backend's files: the store's size
	home := b.TempDir()
	aws := []string{"AWS_ACCESS_KEY_ID=" + k.srv.AccessKey, "AWS_SECRET_ACCESS_KEY=" + k.srv.SecretKey, "AWS_REGION=" + k.srv.Region}
	switch name {
	case "casckpt-local":
		p := casckptCmdPeer(b, filepath.Join(b.TempDir(), "store"))
		p.name = name
		return p
	case "casckpt-cmd":
		m := &procMeter{}
		env := append([]string{"HOME=" + home, "AWS_ENDPOINT_URL=" + k.proxy}, aws...)
		store := "s3://" + k.srv.Bucket + "/" + prefix
		return &hostPeer{name: name, store: dir, procs: m,
			snapshot: func(d, reason string, keep int) {
				runMeteredEnv(b, m, env, "--store", store, "snapshot", d, "-m", reason, "--keep", strconv.Itoa(keep))
			},
		}
	case "restic":
		repo := "s3:" + k.proxy + "/" + k.srv.Bucket + "/" + prefix
		env := append([]string{"RESTIC_PASSWORD=bench", "HOME=" + home, "PATH=" + os.Getenv("PATH")}, aws...)
		r := startRestic(b, repo, []string{"--cache-dir", filepath.Join(home, "cache")}, env)
		return &hostPeer{name: name, store: dir, procs: &r.procMeter,
			snapshot: func(d, _ string, keep int) { r.Snapshot(d, keep) },
		}
	}
	b.Fatalf("no bucket peer %q", name)
	return nil
}

// requestSamples collects the requests of each step by peer, one per
// round (or turn).
type requestSamples struct {
	steps []string
	peers map[string][]string
	reqs  map[string]map[string][]requests
}

func newRequestSamples() *requestSamples {
	return &requestSamples{peers: map[string][]string{}, reqs: map[string]map[string][]requests{}}
}

func (rs *requestSamples) add(step, peer string, r requests) {
	if rs.reqs[step] == nil {
		rs.steps = append(rs.steps, step)
		rs.reqs[step] = map[string][]requests{}
	}
	if rs.reqs[step][peer] == nil {
		rs.peers[step] = append(rs.peers[step], peer)
	}
	rs.reqs[step][peer] = append(rs.reqs[step][peer], r)
}

// report reports the mean requests of each step by peer as metrics
// (STEP-req/PEER) and prints them by kind (mean per step), with the
// smallest, median and largest total, the MiB up and down, the time the
// requests took (summed: parallel ones overlap), that of the PUTs and
// versitygw's CPU time (it shares the cores with the peers), then by
// kind and key class.
func (rs *requestSamples) report(b *testing.B) {
	var t strings.Builder
	fmt.Fprintf(&t, "--- requests %s (mean per step by kind; total min / median / max)\n%-20s %-12s", b.Name(), "step", "peer")
	for _, k := range requestKinds {
		fmt.Fprintf(&t, " %7s", k)
	}
	fmt.Fprintf(&t, " %8s %14s %8s %8s %8s %8s %8s\n", "total", "min/med/max", "MiB up", "MiB down", "req ms", "PUT ms", "gw CPU")
	for _, step := range rs.steps {
		for _, p := range rs.peers[step] {
			rr := rs.reqs[step][p]
			var totals []float64
			var up, down float64
			var busy, busyPut, server time.Duration
			for _, r := range rr {
				server += r.server
				totals = append(totals, float64(r.total()))
				up += float64(r.up) / (1 << 20)
				down += float64(r.down) / (1 << 20)
				busy, busyPut = busy+r.busy, busyPut+r.busyPut
			}
			n := float64(len(rr))
			fmt.Fprintf(&t, "%-20s %-12s", step, p)
			for _, k := range requestKinds {
				sum := 0
				for _, r := range rr {
					sum += r.n[k]
				}
				fmt.Fprintf(&t, " %7.3g", float64(sum)/n)
			}
			mean := 0.0
			for _, v := range totals {
				mean += v
			}
			mean /= n
			b.ReportMetric(mean, step+"-req/"+p)
			fmt.Fprintf(&t, " %8.4g %14s %8.3g %8.3g %8.1f %8.1f %8.0f\n", mean,
				fmt.Sprintf("%g/%g/%g", slices.Min(totals), medianOf(totals), slices.Max(totals)), up/n, down/n, ms(busy)/n, ms(busyPut)/n, ms(server)/n)
			if by := byClass(rr); by != "" {
				fmt.Fprintf(&t, "%-33s %s\n", "", by)
			}
		}
	}
	fmt.Print(t.String())
}

// byClass lists the mean requests per step by kind and key class, the
// most frequent first.
func byClass(rr []requests) string {
	sum := map[string]int{}
	for _, r := range rr {
		for k, v := range r.by {
			sum[k] += v
		}
	}
	keys := sortedKeys(sum)
	slices.SortStableFunc(keys, func(a, b string) int { return sum[b] - sum[a] })
	var out []string
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%s %.3g", k, float64(sum[k])/float64(len(rr))))
	}
	return strings.Join(out, ", ")
}

// BenchmarkCmdS3W1W2: W1 (first snapshot of a copy of GOROOT/src) and W2
// (the no-change snapshot right after it) into a bucket, casckpt-cmd
// against restic's S3 backend on the same versitygw, interleaved round by
// round, each round into fresh prefixes with fresh caches, and the
// command with a local store (casckpt-local) in the same rounds. Besides
// wall, CPU and peak RSS: the requests of each step (table "---
// requests"), W1-store-MiB-du (the posix backend's files) and
// W2-req-beyond-local (a local store makes no request: W2's requests are
// all beyond it).
func BenchmarkCmdS3W1W2(b *testing.B) {
	skipShort(b)
	casckptBinary(b)
	names := peerNames(b, "casckpt-cmd", "casckpt-local", "restic")
	k := startBucket(b)
	tree := w1Tree(b)
	settle()
	s, rs := newSamples(), newRequestSamples()
	for round := range reps() {
		var peers []*hostPeer
		for _, n := range rotate(names, round) {
			peers = append(peers, s3Peer(b, k, n, fmt.Sprintf("%s-%d", n, round)))
		}
		k.take()
		for _, p := range peers {
			s.add("W1", p.name, measure(p, func() { p.snapshot(tree, "first", 20) }))
			rs.add("W1", p.name, k.take())
			alloc, _ := duBytes(p.store)
			s.value("W1-store-MiB-du", p.name, float64(alloc)/(1<<20))
		}
		for _, p := range peers {
			s.add("W2", p.name, measure(p, func() { p.snapshot(tree, "again", 20) }))
			r := k.take()
			rs.add("W2", p.name, r)
			if p.name != "casckpt-local" {
				s.value("W2-req-beyond-local", p.name, float64(r.total()))
			}
		}
		for _, p := range peers {
			os.RemoveAll(p.store)
		}
	}
	s.report(b)
	rs.report(b)
}

// BenchmarkCmdS3W3: W3 (40 turns of edits on the src/net + src/crypto
// project, a snapshot with keep 20 after each) into a bucket, casckpt-cmd
// against restic's S3 backend (backup, then forget --prune past 20) on
// the same versitygw, each on its own copy with the same edits,
// interleaved turn by turn. Steps: W3-turn (median of the 40),
// W3-turn-past-keep (median of turns 21-40); requests per turn for both.
// The command with a local store (casckpt-local) takes its turns beside
// them.
func BenchmarkCmdS3W3(b *testing.B) {
	skipShort(b)
	casckptBinary(b)
	names := peerNames(b, "casckpt-cmd", "casckpt-local", "restic")
	k := startBucket(b)
	s, rs := newSamples(), newRequestSamples()
	for round := range reps() {
		var sides []*w3Side
		for _, n := range rotate(names, round) {
			p := s3Peer(b, k, n, fmt.Sprintf("%s-w3-%d", n, round))
			sides = append(sides, &w3Side{p: p, dir: w3Project(b), rng: rand.New(rand.NewPCG(3, 40))})
		}
		settle()
		for _, sd := range sides {
			sd.p.snapshot(sd.dir, "initial", 20)
		}
		k.take()
		for turn := range 40 {
			for _, sd := range rotate(sides, turn) {
				w3Turn(b, s, sd, turn)
				step := "W3-turn-1-20"
				if turn >= 20 {
					step = "W3-turn-past-keep"
				}
				rs.add(step, sd.p.name, k.take())
			}
		}
		for _, sd := range sides {
			s.add("W3-turn", sd.p.name, summarize(sd.turns, 0.5))
			s.add("W3-turn-p95", sd.p.name, summarize(sd.turns, 0.95))
			s.add("W3-turn-past-keep", sd.p.name, summarize(sd.turns[20:], 0.5))
			alloc, _ := duBytes(sd.p.store)
			s.value("W3-store40-MiB-du", sd.p.name, float64(alloc)/(1<<20))
			os.RemoveAll(sd.p.store)
			os.RemoveAll(sd.dir)
		}
	}
	s.report(b)
	rs.report(b)
}
