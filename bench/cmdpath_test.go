//go:build linux

package bench

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/casckpt/casckpt"

	"github.com/casckpt/casckpt/internal/testtree"
)

// BenchmarkCmdW1W2: W1 (first snapshot of a copy of GOROOT/src) and W2
// (the no-change re-snapshot right after it) as hosts pay them, a process
// per call for casckpt-cmd, git and restic (casckpt-lib is the library in
// this process), interleaved round by round, with the floors of the same
// round: reading the captured bytes, BLAKE3 and zstd (cas's level) each
// one stream, their sum, the stat walk, and a process printing the version.
func BenchmarkCmdW1W2(b *testing.B) {
	skipShort(b)
	casckptBinary(b)
	names := peerNames(b, allPeers...)
	tree := w1Tree(b)
	c := loadCaptured(b, tree)
	enc := newFloorEncoder(b)
	b.Logf("W1: %d files, %.1f MiB captured", len(c.paths), float64(c.bytes)/(1<<20))
	settle()
	s := newSamples()
	for round := range reps() {
		peers := make([]*hostPeer, 0, len(names))
		for _, n := range rotate(names, round) {
			peers = append(peers, newHostPeer(b, n))
		}
		for _, p := range peers {
			s.add("W1", p.name, measure(p, func() { p.snapshot(tree, "first", 20) }))
			alloc, _ := duBytes(p.store)
			s.value("W1-store-MiB-du", p.name, float64(alloc)/(1<<20))
		}
		for _, p := range peers {
			s.add("W2", p.name, measure(p, func() { p.snapshot(tree, "again", 20) }))
		}
		measureFloors(b, s, tree, c, enc)
		for _, p := range peers {
			os.RemoveAll(p.store)
		}
	}
	s.report(b)
}

// w3Side is one peer's project and edits in BenchmarkCmdW3W5.
type w3Side struct {
	p      *hostPeer
	dir    string
	rng    *rand.Rand
	turns  []usage
	oldest map[string][32]byte // the tree after turn 20, the oldest kept
}

// BenchmarkCmdW3W5: W3 (40 turns on the src/net + src/crypto project, a
// snapshot with keep 20 after each) then W5 (restore of the oldest kept
// snapshot, in place, checked byte for byte), every peer on its own copy
// with the same edits, interleaved turn by turn. Steps: W3-turn (median of
// the 40), W3-turn-p95, W3-turn-past-keep (median of turns 21-40),
// W5-restore; values: W3-store20-MiB-du, W3-store40-MiB-du, W5-exact.
func BenchmarkCmdW3W5(b *testing.B) {
	skipShort(b)
	casckptBinary(b)
	names := peerNames(b, allPeers...)
	s := newSamples()
	for round := range reps() {
		var sides []*w3Side
		for _, n := range rotate(names, round) {
			sides = append(sides, &w3Side{p: newHostPeer(b, n), dir: w3Project(b), rng: rand.New(rand.NewPCG(3, 40))})
		}
		settle()
		for _, sd := range sides {
			sd.p.snapshot(sd.dir, "initial", 20)
		}
		for turn := range 40 {
			for _, sd := range rotate(sides, turn) {
				w3Turn(b, s, sd, turn)
			}
		}
		for _, sd := range sides {
			s.add("W3-turn", sd.p.name, summarize(sd.turns, 0.5))
			s.add("W3-turn-p95", sd.p.name, summarize(sd.turns, 0.95))
			s.add("W3-turn-past-keep", sd.p.name, summarize(sd.turns[20:], 0.5))
			alloc, _ := duBytes(sd.p.store)
			s.value("W3-store40-MiB-du", sd.p.name, float64(alloc)/(1<<20))
		}
		for _, sd := range rotate(sides, round) {
			s.add("W5-restore", sd.p.name, measure(sd.p, func() { sd.p.restore(sd.dir, 20) }))
			exact := maps.Equal(sd.oldest, testtree.ReadDigest(b, sd.dir).Files())
			s.value("W5-exact", sd.p.name, map[bool]float64{true: 1}[exact])
		}
		for _, sd := range sides {
			os.RemoveAll(sd.p.store)
			os.RemoveAll(sd.dir)
		}
	}
	s.report(b)
}

// w3Turn edits sd's project as W3's turn does and times its snapshot.
func w3Turn(b *testing.B, s *samples, sd *w3Side, turn int) {
	turnEdit(b, sd.rng, sd.dir, turn)
	sd.turns = append(sd.turns, measure(sd.p, func() { sd.p.snapshot(sd.dir, "turn", 20) }))
	switch turn {
	case 19:
		alloc, _ := duBytes(sd.p.store)
		s.value("W3-store20-MiB-du", sd.p.name, float64(alloc)/(1<<20))
	case 20:
		sd.oldest = testtree.ReadDigest(b, sd.dir).Files()
	}
}

// w7Store is one peer's store of W7's 30 projects x 20 snapshots.
type w7Store struct {
	p      *hostPeer
	dirs   []string
	before int64 // allocated bytes before the prune
}

// BenchmarkCmdW7: W7's prune of 30 projects x 20 snapshots to a cap that
// drops about a quarter, through the command (casckpt prune
// --max-size-mb), the library and the git shadow store (its processes
// summed); restic has no size cap and is left out. The stores are built
// untimed, the cap is the same for every peer: 3/4 of casckpt's store, in
// whole MiB. Values: W7-MiB-freed, W7-cap-met.
func BenchmarkCmdW7(b *testing.B) {
	skipShort(b)
	casckptBinary(b)
	names := peerNames(b, "casckpt-cmd", "casckpt-lib", "git")
	s := newSamples()
	for round := range reps() {
		var stores []*w7Store
		var capBytes int64
		for _, n := range rotate(names, round) {
			st := buildW7(b, n)
			if capBytes == 0 && n != "git" {
				capBytes = st.before * 3 / 4 >> 20 << 20
			}
			stores = append(stores, st)
		}
		if capBytes == 0 {
			capBytes = stores[0].before * 3 / 4 >> 20 << 20
		}
		for _, st := range stores {
			s.add("W7-prune", st.p.name, measure(st.p, func() { w7Prune(b, st, capBytes) }))
			after, _ := duBytes(st.p.store)
			s.value("W7-MiB-freed", st.p.name, float64(st.before-after)/(1<<20))
			s.value("W7-cap-met", st.p.name, map[bool]float64{true: 1}[after <= capBytes])
			os.RemoveAll(st.p.store)
		}
	}
	s.report(b)
}

// buildW7 builds peer name's store of W7 (untimed): the casckpt peers
// through the library, git with its own snapshots.
func buildW7(b *testing.B, name string) *w7Store {
	p := newHostPeer(b, name)
	build := p
	if name == "casckpt-cmd" {
		build = casckptLibPeer(b, p.store)
	}
	rng := rand.New(rand.NewPCG(7, 30))
	st := &w7Store{p: p}
	for i := range 30 {
		d := b.TempDir()
		w7Project(b, rng, d, i)
		st.dirs = append(st.dirs, d)
	}
	for round := range 20 {
		for _, d := range st.dirs {
			if round > 0 {
				w7Evolve(b, rng, d, round)
			}
			build.snapshot(d, "round", 20)
		}
	}
	if p.git != nil {
		p.git.collect()
	}
	st.before, _ = duBytes(p.store)
	return st
}

// w7Prune prunes st's store to capBytes.
func w7Prune(b *testing.B, st *w7Store, capBytes int64) {
	switch st.p.name {
	case "casckpt-cmd":
		runMetered(b, st.p.procs, b.TempDir(), "--store", st.p.store, "prune", "--max-size-mb", fmt.Sprint(capBytes>>20))
	case "casckpt-lib":
		if _, err := st.p.lib.Prune(context.Background(), casckpt.PruneOptions{MaxSize: capBytes}); err != nil {
			b.Fatal(err)
		}
	case "git":
		st.p.git.PruneToCap(st.dirs, capBytes)
	}
}
