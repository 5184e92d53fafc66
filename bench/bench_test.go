//go:build linux

package bench

import (
	"context"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/testtree"
)

func skipShort(b *testing.B) {
	if testing.Short() {
		b.Skip("workload benchmarks are skipped with -short")
	}
}

func openStore(b *testing.B) *casckpt.Store {
	s, err := casckpt.Open(filepath.Join(b.TempDir(), "store"), casckpt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func snap(b *testing.B, s *casckpt.Store, dir string, opts casckpt.SnapshotOptions) casckpt.SnapshotResult {
	r, err := s.Snapshot(context.Background(), dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

var (
	binOnce sync.Once
	binPath string
)

// casckptBinary builds the command once, as a release does, for the
// measurements that need a process of its own (peak RSS, the command's
// own latency): the lean casckpt (the tag casckpt_lean: no S3 client,
// go-git or MCP SDK) and casckpt-full beside it, the whole program, which
// it runs for an s3:// store.
func casckptBinary(b *testing.B) string {
	binOnce.Do(func() {
		dir, _ := os.MkdirTemp("", "casckpt-bench")
		binPath = filepath.Join(dir, "casckpt")
		for out, tags := range map[string]string{binPath: "casckpt_lean", filepath.Join(dir, "casckpt-full"): ""} {
			build := exec.Command("go", "build", "-tags", tags, "-o", out, "../cmd/casckpt")
			build.Env = append(os.Environ(), "CGO_ENABLED=0")
			if msg, err := build.CombinedOutput(); err != nil {
				b.Fatalf("build: %v\n%s", err, msg)
			}
		}
	})
	return binPath
}

// runBinary runs the command (a process of its own; time it around the
// call, and see runMetered for its CPU time and peak RSS).
func runBinary(b *testing.B, args ...string) {
	cmd := exec.Command(casckptBinary(b), args...)
	cmd.Env = []string{"HOME=" + b.TempDir()}
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("casckpt %v: %v\n%s", args, err, out)
	}
}

func reportStore(b *testing.B, dir, prefix string) {
	alloc, apparent := duBytes(dir)
	b.ReportMetric(float64(alloc)/(1<<20), prefix+"MiB-du")
	b.ReportMetric(float64(apparent)/(1<<20), prefix+"MiB-apparent")
}

// W1: first snapshot of a copy of GOROOT/src.
func BenchmarkW1FirstSnapshot(b *testing.B) {
	skipShort(b)
	tree := w1Tree(b)
	settle()
	b.Run("casckpt", func(b *testing.B) {
		var store string
		for b.Loop() {
			b.StopTimer()
			s := openStore(b)
			store = s.Location()
			b.StartTimer()
			snap(b, s, tree, casckpt.SnapshotOptions{})
		}
		reportStore(b, store, "store-")
		var m procMeter // through the rusage program: see procMeter
		runMetered(b, &m, b.TempDir(), "--store", filepath.Join(b.TempDir(), "s"), "snapshot", tree)
		b.ReportMetric(float64(m.maxRSS)/1024, "peak-RSS-MiB")
	})
	b.Run("git", func(b *testing.B) {
		var g *gitShadow
		for b.Loop() {
			b.StopTimer()
			g = newGitShadow(b, filepath.Join(b.TempDir(), "store"))
			b.StartTimer()
			g.Snapshot(tree, "first", 20)
		}
		reportStore(b, g.store, "store-")
		b.ReportMetric(float64(g.maxRSS)/1024, "peak-RSS-MiB")
	})
	b.Run("restic", func(b *testing.B) {
		var r *resticPeer
		for b.Loop() {
			b.StopTimer()
			r = newResticPeer(b, filepath.Join(b.TempDir(), "repo"))
			b.StartTimer()
			r.Snapshot(tree, 20)
		}
		reportStore(b, r.repo, "store-")
		b.ReportMetric(float64(r.maxRSS)/1024, "peak-RSS-MiB")
	})
}

// W2: a re-snapshot of the unchanged W1 tree.
func BenchmarkW2NoChange(b *testing.B) {
	skipShort(b)
	tree := w1Tree(b)
	settle()
	b.Run("casckpt", func(b *testing.B) {
		s := openStore(b)
		snap(b, s, tree, casckpt.SnapshotOptions{})
		snap(b, s, tree, casckpt.SnapshotOptions{}) // past the racy window
		b.ResetTimer()
		for b.Loop() {
			if snap(b, s, tree, casckpt.SnapshotOptions{}).Created {
				b.Fatal("an unchanged tree was recorded")
			}
		}
	})
	b.Run("casckpt-cmd", func(b *testing.B) {
		store := filepath.Join(b.TempDir(), "store")
		runBinary(b, "--store", store, "snapshot", tree)
		runBinary(b, "--store", store, "snapshot", tree)
		b.ResetTimer()
		for b.Loop() {
			runBinary(b, "--store", store, "snapshot", tree)
		}
	})
	b.Run("floor-statwalk", func(b *testing.B) {
		for b.Loop() {
			statWalk(tree)
		}
	})
	b.Run("git", func(b *testing.B) {
		g := newGitShadow(b, filepath.Join(b.TempDir(), "store"))
		g.Snapshot(tree, "first", 20)
		b.ResetTimer()
		for b.Loop() {
			if g.Snapshot(tree, "again", 20) {
				b.Fatal("git recorded an unchanged tree")
			}
		}
	})
	b.Run("restic", func(b *testing.B) {
		r := newResticPeer(b, filepath.Join(b.TempDir(), "repo"))
		r.Snapshot(tree, 0)
		b.ResetTimer()
		for b.Loop() {
			r.Snapshot(tree, 0)
		}
	})
}

// w3Run runs the 40 turns of W3 on a fresh copy of the project with one
// store, and reports latency and store size; it returns the project, the
// store's snapshot ids (newest first) and a digest of the tree after the
// turn whose snapshot ends up oldest kept.
type peer interface {
	snapshot(dir, reason string)
	storeDir() string
}

func w3Run(b *testing.B, p peer) (dir string, oldestKept map[string][32]byte) {
	dir = w3Project(b)
	settle()
	p.snapshot(dir, "initial")
	rng := rand.New(rand.NewPCG(3, 40))
	var lat []time.Duration
	for turn := range 40 {
		turnEdit(b, rng, dir, turn)
		start := time.Now()
		p.snapshot(dir, "turn")
		lat = append(lat, time.Since(start))
		if turn == 19 {
			reportStore(b, p.storeDir(), "store20-")
		}
		if turn == 20 {
			oldestKept = testtree.ReadDigest(b, dir).Files()
		}
	}
	b.ReportMetric(ms(percentile(lat, 0.5)), "ms/turn-median")
	b.ReportMetric(ms(percentile(lat, 0.95)), "ms/turn-p95")
	b.ReportMetric(ms(percentile(lat[20:], 0.5)), "ms/turn-past-keep")
	reportStore(b, p.storeDir(), "store40-")
	return dir, oldestKept
}

type casckptPeer struct {
	b *testing.B
	s *casckpt.Store
}

func (p casckptPeer) snapshot(dir, reason string) {
	snap(p.b, p.s, dir, casckpt.SnapshotOptions{Reason: reason, Keep: 20})
}
func (p casckptPeer) storeDir() string { return p.s.Location() }

type gitPeer struct{ g *gitShadow }

func (p gitPeer) snapshot(dir, reason string) { p.g.Snapshot(dir, reason, 20) }
func (p gitPeer) storeDir() string            { return p.g.store }

// W3: 40 agent turns on a 1.6k-file project, keep 20.
func BenchmarkW3Turns(b *testing.B) {
	skipShort(b)
	b.Run("casckpt", func(b *testing.B) {
		for b.Loop() {
			w3Run(b, casckptPeer{b, openStore(b)})
		}
	})
	b.Run("git", func(b *testing.B) {
		for b.Loop() {
			w3Run(b, gitPeer{newGitShadow(b, filepath.Join(b.TempDir(), "store"))})
		}
	})
	b.Run("restic", func(b *testing.B) {
		for b.Loop() {
			w3Run(b, resticW3Peer{newResticPeer(b, filepath.Join(b.TempDir(), "repo"))})
		}
	})
}

// W4: 12 copies of the W3 project in one store.
func BenchmarkW4Worktrees(b *testing.B) {
	skipShort(b)
	src := w3Project(b)
	var trees []string
	for i := range 12 {
		dst := filepath.Join(b.TempDir(), "wt", string(rune('a'+i)))
		copyTree(b, src, dst)
		trees = append(trees, dst)
	}
	settle()
	measure := func(b *testing.B, p peer) {
		p.snapshot(trees[0], "first")
		first, _ := duBytes(p.storeDir())
		for _, t := range trees[1:] {
			p.snapshot(t, "worktree")
		}
		all, _ := duBytes(p.storeDir())
		per := float64(all-first) / 11
		b.ReportMetric(float64(first)/1024, "KiB-first")
		b.ReportMetric(per/1024, "KiB/extra-worktree")
		b.ReportMetric(100*per/float64(first), "%-of-first")
	}
	b.Run("casckpt", func(b *testing.B) {
		for b.Loop() {
			measure(b, casckptPeer{b, openStore(b)})
		}
	})
	b.Run("git", func(b *testing.B) {
		for b.Loop() {
			measure(b, gitPeer{newGitShadow(b, filepath.Join(b.TempDir(), "store"))})
		}
	})
}

// W5: restore the oldest kept snapshot after W3, in place. The file systems
// are synced before each timed restore (as measure does), so that no peer
// pays for writing back what the step before it wrote.
func BenchmarkW5Restore(b *testing.B) {
	skipShort(b)
	casckptBinary(b) // built before any timing
	b.Run("casckpt", func(b *testing.B) {
		s := openStore(b)
		dir, want := w3Run(b, casckptPeer{b, s})
		list, err := s.List(context.Background(), dir, 0)
		if err != nil || len(list) != 20 {
			b.Fatalf("%d snapshots kept: %v", len(list), err)
		}
		oldest := casckpt.Ref(list[len(list)-1].ID.String())
		syscall.Sync()
		b.ResetTimer()
		for b.Loop() {
			if _, err := s.Restore(context.Background(), dir, oldest, casckpt.RestoreOptions{}); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			exact := maps.Equal(want, testtree.ReadDigest(b, dir).Files())
			b.ReportMetric(map[bool]float64{true: 1}[exact], "exact")
			// Back to the newest state for the next round.
			s.Restore(context.Background(), dir, "@1", casckpt.RestoreOptions{})
			syscall.Sync()
			b.StartTimer()
		}
	})
	b.Run("casckpt-cmd", func(b *testing.B) { // a process per restore, as a host that shells out pays
		s := openStore(b)
		dir, want := w3Run(b, casckptPeer{b, s})
		list, err := s.List(context.Background(), dir, 0)
		if err != nil || len(list) != 20 {
			b.Fatalf("%d snapshots kept: %v", len(list), err)
		}
		oldest := list[len(list)-1].ID.String()
		syscall.Sync()
		b.ResetTimer()
		for b.Loop() {
			runBinary(b, "--store", s.Location(), "restore", dir, oldest)
			b.StopTimer()
			b.ReportMetric(map[bool]float64{true: 1}[maps.Equal(want, testtree.ReadDigest(b, dir).Files())], "exact")
			runBinary(b, "--store", s.Location(), "restore", dir, "@1")
			syscall.Sync()
			b.StartTimer()
		}
	})
	b.Run("git", func(b *testing.B) {
		g := newGitShadow(b, filepath.Join(b.TempDir(), "store"))
		dir, want := w3Run(b, gitPeer{g})
		commits := g.Commits(dir)
		oldest, newest := commits[len(commits)-1], commits[0]
		syscall.Sync()
		b.ResetTimer()
		for b.Loop() {
			g.Restore(dir, oldest)
			b.StopTimer()
			b.ReportMetric(map[bool]float64{true: 1}[maps.Equal(want, testtree.ReadDigest(b, dir).Files())], "exact")
			g.Restore(dir, newest)
			syscall.Sync()
			b.StartTimer()
		}
	})
	b.Run("restic", func(b *testing.B) {
		r := newResticPeer(b, filepath.Join(b.TempDir(), "repo"))
		dir, want := w3Run(b, resticW3Peer{r})
		snaps := r.Snapshots(dir)
		oldest, newest := snaps[0], snaps[len(snaps)-1]
		syscall.Sync()
		b.ResetTimer()
		for b.Loop() {
			r.Restore(dir, oldest)
			b.StopTimer()
			b.ReportMetric(map[bool]float64{true: 1}[maps.Equal(want, testtree.ReadDigest(b, dir).Files())], "exact")
			r.Restore(dir, newest)
			syscall.Sync()
			b.StartTimer()
		}
	})
}

// W6: a 64 MiB random file, ten 4 KiB overwrites, a snapshot after each.
func BenchmarkW6LargeEdit(b *testing.B) {
	skipShort(b)
	run := func(b *testing.B, p peer) {
		dir := b.TempDir()
		rng := rand.New(rand.NewPCG(6, 64))
		path := filepath.Join(dir, "big.bin")
		os.WriteFile(path, randomBytes(rng, 64<<20), 0o644)
		p.snapshot(dir, "first")
		var growth []time.Duration // bytes, kept as durations for percentile
		for turn := range 10 {
			f, _ := os.OpenFile(path, os.O_WRONLY, 0)
			f.WriteAt(randomBytes(rng, 4096), rng.Int64N(64<<20-4096))
			f.Close()
			before, _ := duBytes(p.storeDir())
			p.snapshot(dir, "edit")
			after, _ := duBytes(p.storeDir())
			growth = append(growth, time.Duration(after-before))
			_ = turn
		}
		b.ReportMetric(float64(percentile(growth, 0.5))/1024, "KiB/edit-median")
	}
	b.Run("casckpt", func(b *testing.B) {
		for b.Loop() {
			s := openStore(b)
			run(b, bigPeer{casckptPeer{b, s}})
		}
	})
	b.Run("git", func(b *testing.B) {
		for b.Loop() {
			run(b, gitPeer{newGitShadow(b, filepath.Join(b.TempDir(), "store"))})
		}
	})
}

// bigPeer raises the file-size cap to 100 MB, as W6 asks of every peer.
type bigPeer struct{ casckptPeer }

func (p bigPeer) snapshot(dir, reason string) {
	snap(p.b, p.s, dir, casckpt.SnapshotOptions{Reason: reason, Keep: 20, MaxFileSize: 100_000_000})
}

// W7: 30 projects x 20 snapshots, then a prune to a cap that drops about a
// quarter of them.
func BenchmarkW7Prune(b *testing.B) {
	skipShort(b)
	build := func(b *testing.B, p peer) []string {
		rng := rand.New(rand.NewPCG(7, 30))
		var dirs []string
		for i := range 30 {
			d := filepath.Join(b.TempDir(), "p")
			w7Project(b, rng, d, i)
			dirs = append(dirs, d)
		}
		for round := range 20 {
			for _, d := range dirs {
				if round > 0 {
					w7Evolve(b, rng, d, round)
				}
				p.snapshot(d, "round")
			}
		}
		return dirs
	}
	b.Run("casckpt", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			s := openStore(b)
			build(b, w7Peer{casckptPeer{b, s}})
			before, _ := duBytes(s.Location())
			capBytes := before * 3 / 4
			b.StartTimer()
			res, err := s.Prune(context.Background(), casckpt.PruneOptions{MaxSize: capBytes})
			b.StopTimer()
			after, _ := duBytes(s.Location())
			if err != nil || !res.CapMet || after > capBytes {
				b.Fatalf("prune: %+v %v; %d bytes left for a cap of %d", res, err, after, capBytes)
			}
			b.ReportMetric(float64(res.SnapshotsDropped), "snapshots-dropped")
			b.ReportMetric(float64(before-after)/(1<<20), "MiB-freed")
			b.StartTimer()
		}
	})
	b.Run("git", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			g := newGitShadow(b, filepath.Join(b.TempDir(), "store"))
			dirs := build(b, gitPeer{g})
			g.collect()
			before, _ := duBytes(g.store)
			capBytes := before * 3 / 4
			b.StartTimer()
			g.PruneToCap(dirs, capBytes)
			b.StopTimer()
			after, _ := duBytes(g.store)
			b.ReportMetric(float64(before-after)/(1<<20), "MiB-freed")
			b.StartTimer()
		}
	})
}

// w7Peer keeps every snapshot while the store is built and no size cap.
type w7Peer struct{ casckptPeer }

func (p w7Peer) snapshot(dir, reason string) {
	snap(p.b, p.s, dir, casckpt.SnapshotOptions{Reason: reason, Keep: 20, MaxStoreSize: -1})
}
