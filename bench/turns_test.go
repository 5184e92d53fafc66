//go:build linux

package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/manifest"
)

// thousandSnapshots makes a project of 200 source files in 10 directories
// and 500 turns in it, keeping every snapshot: before each turn but the
// first a person edits a file, so the turn starts on a snapshot of its
// own; the agent edits two files and the turn ends. 1,000 snapshots.
func thousandSnapshots(b *testing.B, s *casckpt.Store) string {
	dir := filepath.Join(b.TempDir(), "project")
	rng := rand.New(rand.NewPCG(10, 0))
	var files []string
	for i := range 200 {
		p := filepath.Join(dir, fmt.Sprint("pkg", i%10), fmt.Sprintf("f%03d.go", i))
		files = append(files, p)
		var text []byte
		for j := range 40 + rng.IntN(80) {
			text = fmt.Appendf(text, "func F%d_%d(x int) int { return x*%d + %d }\n", i, j, rng.IntN(1000), j)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, text, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	appendLine := func(who string, turn int) {
		f, err := os.OpenFile(files[rng.IntN(len(files))], os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(f, "// %s, turn %d\n", who, turn)
		f.Close()
	}
	for turn := range 500 {
		id := fmt.Sprint("t", turn)
		if turn > 0 {
			appendLine("person", turn)
		}
		snap(b, s, dir, casckpt.SnapshotOptions{Reason: id + " start", Session: "s", Turn: id, Keep: -1})
		appendLine("agent", turn)
		appendLine("agent", turn)
		snap(b, s, dir, casckpt.SnapshotOptions{Reason: id + " end", Session: "s", Turn: id, EndTurn: true, Keep: -1})
	}
	return dir
}

// BenchmarkTurnsList: turns and list (--json) through the command (a
// process per call) on a project with 1,000 snapshots and 500 turns,
// against the target of 10 ms; version-cmd, a process that only
// prints its version, is the floor a process costs on this machine, and
// each -cmd reports its time above it (ms-above-floor) and the CPU time
// it used (cpu-ms/op). turns and list are the same calls in the library.
// The setup's calls fill the count cache, so these read it; -uncached is
// the first call, which computes every count and stores it, and
// list-cmd-after-snapshot a list through the command after each new
// snapshot (one pair to count and cache).
func BenchmarkTurnsList(b *testing.B) {
	skipShort(b)
	ctx := context.Background()
	s := openStore(b)
	dir := thousandSnapshots(b, s)
	list, err := s.List(ctx, dir, 0)
	if err != nil || len(list) != 1000 {
		b.Fatalf("%d snapshots: %v", len(list), err)
	}
	turns, err := s.Turns(ctx, dir, "")
	if err != nil || len(turns) != 500 {
		b.Fatalf("%d turns: %v", len(turns), err)
	}
	casckptBinary(b) // built before any timing
	var floor time.Duration
	for _, c := range []struct {
		name string
		args []string
	}{
		{"version-cmd", []string{"version", "--json"}},
		{"turns-cmd", []string{"--store", s.Location(), "turns", dir, "--json"}},
		{"list-cmd", []string{"--store", s.Location(), "list", dir, "--json"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				cpu += runBinaryCPU(b, c.args...)
			}
			wall := b.Elapsed() / time.Duration(b.N)
			b.ReportMetric(ms(wall), "ms/op")
			b.ReportMetric(ms(cpu/time.Duration(b.N)), "cpu-ms/op")
			if c.name == "version-cmd" {
				floor = wall
			} else if floor > 0 {
				b.ReportMetric(ms(wall-floor), "ms-above-floor")
			}
		})
	}
	benchmarkTurnsListLibrary(b, s, dir)
	// A host that lists after every snapshot: one new pair to count and
	// cache each time.
	b.Run("list-cmd-after-snapshot", func(b *testing.B) {
		n := 0
		for b.Loop() {
			b.StopTimer()
			n++
			if err := os.WriteFile(filepath.Join(dir, "after.txt"), fmt.Appendf(nil, "%d\n", n), 0o644); err != nil {
				b.Fatal(err)
			}
			snap(b, s, dir, casckpt.SnapshotOptions{Keep: -1})
			b.StartTimer()
			runBinaryCPU(b, "--store", s.Location(), "list", dir, "--json")
		}
		b.ReportMetric(ms(b.Elapsed()/time.Duration(b.N)), "ms/op")
	})
}

// benchmarkTurnsListLibrary times Store.Turns and Store.List on dir, with
// the count cache full and, as -uncached, emptied before each call.
func benchmarkTurnsListLibrary(b *testing.B, s *casckpt.Store, dir string) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"turns", func() error { _, err := s.Turns(ctx, dir, ""); return err }},
		{"list", func() error { _, err := s.List(ctx, dir, 0); return err }},
	} {
		b.Run(c.name, func(b *testing.B) {
			if err := c.call(); err != nil { // fill the cache the last -uncached left
				b.Fatal(err)
			}
			for b.Loop() {
				if err := c.call(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(ms(b.Elapsed()/time.Duration(b.N)), "ms/op")
		})
		// The first call, which computes every count and caches them.
		b.Run(c.name+"-uncached", func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				dropCountCache(b, s)
				b.StartTimer()
				if err := c.call(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(ms(b.Elapsed()/time.Duration(b.N)), "ms/op")
		})
	}
}

// dropCountCache empties the store's cache of change counts.
func dropCountCache(b *testing.B, s *casckpt.Store) {
	db := index.Open(filepath.Join(s.Location(), "casckpt.db"), index.Options{Timeout: time.Second, Chunker: manifest.ChunkerName})
	err := db.Update(func(tx *index.Tx) error {
		_, err := tx.DropChangeCounts(func(cas.ID) bool { return true }, cas.ID{})
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
}
