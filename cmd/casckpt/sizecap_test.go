package main

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSizeCapRefusesASnapshotOverHalfTheCap: a snapshot that alone would
// take more than half of the size cap is refused (exit 1, naming its size
// and the cap), and every snapshot of the other project, its newest
// included, is kept; a snapshot under half of the cap is taken and the cap
// then drops older snapshots as before.
func TestSizeCapRefusesASnapshotOverHalfTheCap(t *testing.T) {
	b := newBinEnv(t)
	rng := rand.New(rand.NewPCG(3, 4))
	random := func(n int) string {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		return string(p)
	}
	project, scratch := filepath.Join(b.home, "project"), filepath.Join(b.home, "scratch")
	for i := range 3 {
		writeFiles(t, project, map[string]string{"data.bin": random(800 << 10), "n.txt": strings.Repeat("x", i)})
		b.ok("snapshot", project, "--max-size-mb", "4")
	}
	before := listing(t, b, project)
	writeFiles(t, scratch, map[string]string{"big.bin": random(2200 << 10)}) // random: stored as it is
	r := b.run("snapshot", scratch, "--max-size-mb", "4")
	failsWith(t, r, 1, "more than half of its 4194304-byte (4.0 MiB) size cap")
	if !strings.Contains(r.err, "would add 22") || !strings.Contains(r.err, scratch) {
		t.Errorf("the refusal does not name the snapshot's size and directory: %q", r.err)
	}
	if got := listing(t, b, project); !slices.Equal(got, before) {
		t.Fatalf("the refused snapshot changed the other project's snapshots: %v, want %v", got, before)
	}
	if got := listing(t, b, scratch); len(got) != 0 {
		t.Fatalf("a refused snapshot is listed: %v", got)
	}
	b.ok("verify")

	// Under half of the cap: taken, and the cap drops older snapshots.
	writeFiles(t, scratch, map[string]string{"big.bin": random(1900 << 10)})
	if doc := jsonOf[map[string]any](t, b.ok("snapshot", scratch, "--max-size-mb", "4", "--json").out); doc["created"] != true {
		t.Fatalf("a snapshot of under half the cap: %v", doc)
	}
	if got := listing(t, b, project); len(got) == 0 || len(got) == len(before) || got[0] != before[0] {
		t.Fatalf("the cap kept %v of %v: it drops older snapshots, never the newest", got, before)
	}
}
