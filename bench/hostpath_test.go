package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
)

// The host-path benchmarks (BenchmarkCmd*) run every peer as a host runs
// it, a process per call, interleaved rep by rep, with a sync before each
// timed step; they do their own repetitions (CASCKPT_BENCH_REPS) and are
// meant to be run with -benchtime 1x.

// procMeter sums the CPU time (user+sys, from wait4) and keeps the peak
// resident size of the processes a peer runs, each run through the rusage
// program (see bench/internal/rusage: a child forked by this process
// would report this process's size as its own).
type procMeter struct {
	cpu    time.Duration
	maxRSS int64 // KiB
	// overhead is the time the rusage program added around the processes.
	overhead time.Duration
}

// run runs cmd through the rusage program and counts its process.
func (m *procMeter) run(tb testing.TB, cmd *exec.Cmd) error {
	r, w, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	cmd.Args = append([]string{"rusage", cmd.Path}, cmd.Args[1:]...)
	cmd.Path = rusageBinary(tb)
	cmd.ExtraFiles = []*os.File{w}
	start := time.Now()
	err = cmd.Start()
	w.Close()
	if err != nil {
		return err
	}
	err = cmd.Wait()
	outer := time.Since(start)
	var wall, cpu time.Duration
	var rss int64
	if _, serr := fmt.Fscan(r, &wall, &cpu, &rss); serr != nil {
		tb.Fatalf("no usage reported for %v: %v (%v)", cmd.Args[1:], serr, err)
	}
	m.cpu += cpu
	m.maxRSS = max(m.maxRSS, rss)
	m.overhead += outer - wall
	return err
}

var (
	rusageOnce sync.Once
	rusagePath string
)

// rusageBinary builds bench/internal/rusage once.
func rusageBinary(tb testing.TB) string {
	rusageOnce.Do(func() {
		dir, _ := os.MkdirTemp("", "casckpt-bench")
		rusagePath = filepath.Join(dir, "rusage")
		if out, err := exec.Command("go", "build", "-o", rusagePath, "./internal/rusage").CombinedOutput(); err != nil {
			tb.Fatalf("build rusage: %v\n%s", err, out)
		}
	})
	return rusagePath
}

// usage is what one timed step cost.
type usage struct {
	wall, cpu time.Duration
	rssKiB    int64 // 0 when the step ran in this process
}

// hostPeer is one side of an interleaved comparison: a store that takes
// snapshots of project directories and restores them.
type hostPeer struct {
	name  string
	store string
	// procs counts the processes the peer runs; nil when it runs in this
	// process (its CPU time is then this process's).
	procs    *procMeter
	snapshot func(dir, reason string, keep int)
	// restore puts dir back to its snapshot n places from the newest
	// (1: the newest), in place.
	restore func(dir string, n int)
	// close, if set, ends what the peer keeps running between steps (a
	// client's driver).
	close func()
	// lib and git are the library's store and the git shadow store, for
	// the peers that are those.
	lib *casckpt.Store
	git *gitShadow
}

// measure syncs the file systems, then times f as a step of p.
func measure(p *hostPeer, f func()) usage {
	syscall.Sync()
	if p.procs != nil {
		*p.procs = procMeter{}
	}
	self := cpuTime()
	start := time.Now()
	f()
	u := usage{wall: time.Since(start)}
	if p.procs != nil {
		u.wall -= p.procs.overhead
		u.cpu, u.rssKiB = p.procs.cpu, p.procs.maxRSS
	} else {
		u.cpu = cpuTime() - self
	}
	return u
}

// envInt reads a positive integer from the environment, or def.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// envInts reads a comma-separated list of positive integers, or def.
func envInts(name string, def ...int) []int {
	var out []int
	for f := range strings.SplitSeq(os.Getenv(name), ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return def
	}
	return out
}

// reps is how many interleaved rounds each host-path benchmark runs.
func reps() int { return envInt("CASCKPT_BENCH_REPS", 3) }

// allPeers are the peers of the host-path benchmarks, in the order of
// their first round.
var allPeers = []string{"casckpt-cmd", "casckpt-lib", "git", "restic"}

// peerNames returns the peers to run, among those a benchmark supports:
// CASCKPT_BENCH_PEERS (comma-separated) narrows them; a peer whose
// program is not installed is left out with a message; with none left
// the benchmark is skipped.
func peerNames(b *testing.B, supported ...string) []string {
	want := strings.Split(os.Getenv("CASCKPT_BENCH_PEERS"), ",")
	var out []string
	for _, n := range supported {
		if os.Getenv("CASCKPT_BENCH_PEERS") != "" && !slices.Contains(want, n) {
			continue
		}
		if prog := map[string]string{"git": "git", "restic": "restic"}[n]; prog != "" {
			if _, err := exec.LookPath(prog); err != nil {
				b.Logf("%s is not installed: the %s peer is left out", prog, n)
				continue
			}
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		b.Skipf("none of the peers %v is selected (CASCKPT_BENCH_PEERS) and installed", supported)
	}
	return out
}

// newHostPeer makes peer name with a fresh store in a new directory.
func newHostPeer(b *testing.B, name string) *hostPeer {
	store := filepath.Join(b.TempDir(), "store")
	switch name {
	case "casckpt-cmd":
		return casckptCmdPeer(b, store)
	case "casckpt-lib":
		return casckptLibPeer(b, store)
	case "git":
		g := newGitShadow(b, store)
		return &hostPeer{name: name, store: store, procs: &g.procMeter, git: g,
			snapshot: func(dir, reason string, keep int) { g.Snapshot(dir, reason, keep) },
			restore:  func(dir string, n int) { g.Restore(dir, g.Commits(dir)[n-1]) },
		}
	case "restic":
		r := newResticPeer(b, store)
		return &hostPeer{name: name, store: store, procs: &r.procMeter,
			snapshot: func(dir, _ string, keep int) { r.Snapshot(dir, keep) },
			restore: func(dir string, n int) {
				snaps := r.Snapshots(dir)
				r.Restore(dir, snaps[len(snaps)-n])
			},
		}
	}
	b.Fatalf("no peer %q", name)
	return nil
}

// casckptCmdPeer runs the casckpt command, a process per call.
func casckptCmdPeer(b *testing.B, store string) *hostPeer {
	m := &procMeter{}
	home := b.TempDir()
	p := &hostPeer{name: "casckpt-cmd", store: store, procs: m}
	p.snapshot = func(dir, reason string, keep int) {
		runMetered(b, m, home, "--store", store, "snapshot", dir, "-m", reason, "--keep", strconv.Itoa(keep))
	}
	p.restore = func(dir string, n int) {
		runMetered(b, m, home, "--store", store, "restore", dir, fmt.Sprint("@", n))
	}
	return p
}

// casckptLibPeer calls the library in this process, as a Go host does.
func casckptLibPeer(b *testing.B, store string) *hostPeer {
	s, err := casckpt.Open(store, casckpt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return &hostPeer{name: "casckpt-lib", store: store, lib: s,
		snapshot: func(dir, reason string, keep int) {
			snap(b, s, dir, casckpt.SnapshotOptions{Reason: reason, Keep: keep})
		},
		restore: func(dir string, n int) {
			if _, err := s.Restore(context.Background(), dir, casckpt.Ref(fmt.Sprint("@", n)), casckpt.RestoreOptions{}); err != nil {
				b.Fatal(err)
			}
		},
	}
}

// runMetered runs the casckpt command with HOME at home, counts its
// process in m and returns its standard output.
func runMetered(b *testing.B, m *procMeter, home string, args ...string) []byte {
	return runMeteredEnv(b, m, []string{"HOME=" + home}, args...)
}

// runMeteredEnv runs the casckpt command with environment env, counts
// its process in m and returns its standard output.
func runMeteredEnv(b *testing.B, m *procMeter, env []string, args ...string) []byte {
	cmd := exec.Command(casckptBinary(b), args...)
	cmd.Env = env
	var errb strings.Builder
	cmd.Stderr = &errb
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := m.run(b, cmd); err != nil {
		b.Fatalf("casckpt %v: %v\n%s", args, err, errb.String())
	}
	return out.Bytes()
}

// rotate returns peers starting at the i-th, so that no peer always runs
// first in a round.
func rotate[T any](peers []T, i int) []T {
	if len(peers) == 0 {
		return peers
	}
	i %= len(peers)
	return append(slices.Clone(peers[i:]), peers[:i]...)
}

// TestProcMeterOwnPeak: a process run through the rusage program reports
// its own peak RSS, not that of this (large) process, and its exit code.
func TestProcMeterOwnPeak(t *testing.T) {
	ballast := make([]byte, 256<<20)
	for i := range ballast {
		ballast[i] = 1
	}
	var m procMeter
	if err := m.run(t, exec.Command("true")); err != nil {
		t.Fatal(err)
	}
	if m.maxRSS <= 0 || m.maxRSS > 64<<10 {
		t.Fatalf("true's peak RSS: %d KiB, want its own (a few MiB) beside a %d MiB parent", m.maxRSS, len(ballast)>>20)
	}
	var exit *exec.ExitError
	if err := m.run(t, exec.Command("sh", "-c", "exit 3")); !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("exit code not passed through: %v", err)
	}
}
