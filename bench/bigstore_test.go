//go:build linux

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
)

// w8Side is one of W8's two stores (big: the synthetic projects and the
// target; alone: the target only) with its copy of the target project.
type w8Side struct {
	p   *hostPeer
	dir string
	rng *rand.Rand
}

// BenchmarkCmdW8: W8, cost that stays flat as the store grows. For each
// N of CASCKPT_W8_PROJECTS (default 1,100,1000; the store grows from one
// to the next), a store of N small synthetic projects x 20 snapshots
// (built untimed through the library) plus a target project (W3's, with
// 20 snapshots of W3's turns), against a store holding only the target
// (alone). Through the command, on both, each round: diff @1 of the
// target after a W3 turn's edit (W8-diff), the turn's snapshot with keep
// 20 (W8-turn), list --json (W8-list), restore @2 (W8-restore), status
// --json (W8-status; target < 200 ms) and a prune that drops nothing
// (W8-prune; < 500 ms). The ratio column is big / alone (target 1.2x).
func BenchmarkCmdW8(b *testing.B) {
	skipShort(b)
	casckptBinary(b)
	ns := envInts("CASCKPT_W8_PROJECTS", 1, 100, 1000)
	slices.Sort(ns)
	big := w8Target(b, "big")
	alone := w8Target(b, "alone")
	root := b.TempDir() // the synthetic projects, kept from one N to the next
	built := 0
	var all []*samples
	for _, n := range ns {
		b.Run(fmt.Sprint("projects=", n), func(b *testing.B) {
			start := time.Now()
			buildSynthetic(b, big.p.lib, root, built, n)
			// A store that took this many snapshots in use has been
			// collected along the way (every few dropped snapshots), which
			// merges the small packs of single snapshots: so is this one,
			// untimed, rather than left with a pack per snapshot.
			if _, err := big.p.lib.GC(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.Logf("built %d synthetic projects x 20 snapshots in %s (collected)", n-built, time.Since(start).Round(time.Millisecond))
			built = n
			alloc, _ := duBytes(big.p.store)
			b.ReportMetric(float64(alloc)/(1<<20), "store-MiB-du/big")
			s := newSamples()
			s.base = "big"
			for round := range reps() {
				for _, sd := range rotate([]*w8Side{big, alone}, round) {
					w8Round(b, s, sd, round)
				}
			}
			s.report(b)
			all = append(all, s)
		})
	}
	if len(all) == len(ns) {
		printSlope("projects", ns, all, "big")
	}
}

// w8Target makes a store and a copy of W3's project in it with 20
// snapshots of W3's first 20 turns (untimed, through the library).
func w8Target(b *testing.B, name string) *w8Side {
	p := casckptLibPeer(b, filepath.Join(b.TempDir(), "store"))
	sd := &w8Side{p: p, dir: w3Project(b), rng: rand.New(rand.NewPCG(8, 20))}
	p.name = name
	for turn := range 20 {
		turnEdit(b, sd.rng, sd.dir, turn)
		p.snapshot(sd.dir, "turn", 20)
	}
	return sd
}

// w8Round runs one round of W8's calls on sd, a process each.
func w8Round(b *testing.B, s *samples, sd *w8Side, round int) {
	var m procMeter
	home := b.TempDir()
	cmd := &hostPeer{name: sd.p.name, procs: &m}
	run := func(step string, args ...string) []byte {
		var out []byte
		s.add(step, sd.p.name, measure(cmd, func() {
			out = runMetered(b, &m, home, append([]string{"--store", sd.p.store}, args...)...)
		}))
		return out
	}
	turnEdit(b, sd.rng, sd.dir, 20+round)
	run("W8-diff", "diff", sd.dir, "@1")
	run("W8-turn", "snapshot", sd.dir, "--keep", "20", "-m", "turn")
	run("W8-list", "list", sd.dir, "--json")
	run("W8-restore", "restore", sd.dir, "@2")
	run("W8-status", "status", "--json")
	var pruned struct {
		Dropped int `json:"snapshots_dropped"`
	}
	if err := json.Unmarshal(run("W8-prune", "prune", "--json"), &pruned); err != nil || pruned.Dropped != 0 {
		b.Fatalf("prune: %+v, %v: it should drop nothing", pruned, err)
	}
}

// buildSynthetic adds projects from..to-1 to s, under root, each a tiny tree (12 small
// files in 3 directories) with 20 snapshots, one file edited before each,
// in parallel.
func buildSynthetic(b *testing.B, s *casckpt.Store, root string, from, to int) {
	work := make(chan int)
	var wg sync.WaitGroup
	for range 2 * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range work {
				synthProject(b, s, filepath.Join(root, fmt.Sprint("p", i)), i)
			}
		})
	}
	for i := from; i < to; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
}

// synthProject writes W8's tiny project i at dir and takes its 20
// snapshots.
func synthProject(b *testing.B, s *casckpt.Store, dir string, i int) {
	rng := rand.New(rand.NewPCG(8, uint64(i)))
	file := func(j int) string { return filepath.Join(dir, fmt.Sprint("d", j%3), fmt.Sprintf("f%02d.go", j)) }
	write := func(j int, text []byte) {
		if err := os.MkdirAll(filepath.Dir(file(j)), 0o755); err != nil {
			b.Error(err)
		}
		if err := os.WriteFile(file(j), text, 0o644); err != nil {
			b.Error(err)
		}
	}
	for j := range 12 {
		var text []byte
		for k := range 5 + rng.IntN(40) {
			text = fmt.Appendf(text, "func P%d_F%d_%d(x int) int { return x*%d }\n", i, j, k, rng.IntN(1000))
		}
		write(j, text)
	}
	ctx := context.Background()
	for n := range 20 {
		if n > 0 {
			j := rng.IntN(12)
			text, _ := os.ReadFile(file(j))
			write(j, fmt.Appendf(text, "// snapshot %d\n", n))
		}
		if _, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{Reason: "synthetic", Keep: 20, MaxStoreSize: -1}); err != nil {
			b.Error(err)
			return
		}
	}
}
