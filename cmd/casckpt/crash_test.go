package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/casckpt/casckpt/internal/testtree"
)

// digest maps each file of a tree to a hash of its bytes, leaving out the
// temporary files a killed restore may leave (never captured).
func digest(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	files := testtree.ReadDigest(t, dir).Files()
	maps.DeleteFunc(files, func(p string, _ [32]byte) bool { return strings.HasPrefix(path.Base(p), ".casckpt-") })
	return files
}

// TestCrashLoop starts snapshot, restore, gc and prune and kills each with
// SIGKILL at a random moment, then checks that the store verifies clean,
// that a killed restore left every file old or new, that the next command
// needs no repair, and that every snapshot reported complete restores
// byte for byte.
func TestCrashLoop(t *testing.T) {
	iterations := 200
	if testing.Short() {
		iterations = 25
	}
	bin := newBinEnv(t)
	dir := filepath.Join(bin.home, "project")
	rng := rand.New(rand.NewPCG(5, 200))
	casckpt := func(args ...string) *exec.Cmd {
		return bin.command(append([]string{"--store", bin.store()}, args...)...)
	}
	mustRun := func(args ...string) []byte {
		t.Helper()
		var errb bytes.Buffer
		c := casckpt(args...)
		c.Stderr = &errb
		out, err := c.Output()
		if err != nil {
			t.Fatalf("casckpt %v after a crash: %v: %s", args, err, errb.String())
		}
		return out
	}
	edit := func() {
		for range 1 + rng.IntN(4) {
			p := filepath.Join(dir, fmt.Sprintf("d%d/f%02d.txt", rng.IntN(5), rng.IntN(40)))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if rng.IntN(6) == 0 {
				os.Remove(p)
				continue
			}
			os.WriteFile(p, []byte(fmt.Sprintf("edit %d\n%s", rng.Uint64(), strings.Repeat("x", rng.IntN(5000)))), 0o644)
		}
		big := filepath.Join(dir, fmt.Sprintf("big%d.bin", rng.IntN(3)))
		b := make([]byte, 1<<20)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		os.WriteFile(big, b, 0o644)
	}
	os.MkdirAll(dir, 0o755)
	edit()

	type known struct {
		id   string
		tree map[string][32]byte
	}
	var complete []known
	killed, finished := map[string]int{}, map[string]int{}
	seen := map[string]bool{} // every snapshot ever listed
	// Kills are calibrated from this machine's own runs, never from fixed
	// durations: each operation's first run, and one in three after it, runs
	// to the end and is timed; the others are killed at a uniformly random
	// moment within 1.25 times the longest of its last timed runs, so kills
	// land in every phase of it however fast or slow the machine is, and
	// snapshots keep completing.
	timed := map[string][]time.Duration{}
	killAt := func(op string) (time.Duration, bool) {
		runs := timed[op]
		if len(runs) == 0 || rng.IntN(3) == 0 {
			return 0, false
		}
		longest := slices.Max(runs[max(0, len(runs)-5):])
		return time.Duration(rng.Int64N(int64(longest)*5/4 + 1)), true
	}
	for i := range iterations {
		op := []string{"snapshot", "restore", "gc", "prune", "repair"}[rng.IntN(5)]
		var args []string
		var before, target map[string][32]byte
		var listedBefore []byte
		switch op {
		case "snapshot":
			edit()
			args = []string{"snapshot", dir, "--json", "--keep", "8"}
		case "restore":
			listing := mustRun("list", dir, "--json")
			var candidates []known
			for _, k := range complete {
				if listed(t, listing, k.id) {
					candidates = append(candidates, k)
				}
			}
			if len(candidates) == 0 {
				continue
			}
			k := candidates[rng.IntN(len(candidates))]
			before, target = digest(t, dir), k.tree
			args = []string{"restore", dir, k.id, "--json"}
		case "gc":
			// Give gc something to collect: forget the oldest snapshot.
			if len(complete) > 2 && rng.IntN(2) == 0 {
				casckpt("forget", dir, "@3").Run()
			}
			args = []string{"gc", "--json"}
		case "prune":
			args = []string{"prune", "--max-size-mb", "6", "--retention-days", "0", "--json"}
		case "repair":
			listedBefore = mustRun("list", dir, "--json")
			args = []string{"repair", "--json"}
		}
		tree := digest(t, dir)
		c := casckpt(args...)
		var out bytes.Buffer
		c.Stdout = &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		started := time.Now()
		delay, kill := killAt(op)
		if kill {
			time.Sleep(delay)
			c.Process.Signal(syscall.SIGKILL)
		}
		err := c.Wait()
		if err != nil && !kill {
			t.Fatalf("iteration %d: casckpt %v failed without a kill: %v", i, args, err)
		}
		if !kill {
			timed[op] = append(timed[op], time.Since(started))
		}
		done := err == nil
		if done {
			finished[op]++
		} else {
			killed[op]++
		}
		if op == "snapshot" && done {
			var doc struct {
				ID *string `json:"id"`
			}
			if json.Unmarshal(out.Bytes(), &doc) == nil && doc.ID != nil {
				complete = append(complete, known{*doc.ID, tree})
			}
		}
		if op == "restore" && !done {
			now := digest(t, dir)
			for p, h := range now {
				if before[p] != h && target[p] != h {
					t.Fatalf("iteration %d: a killed restore left %s neither old nor new", i, p)
				}
			}
		}
		now := listedIDs(t, mustRun("list", dir, "--json"))
		if op == "repair" {
			// Finished or killed, a repair loses no snapshot and brings
			// back none that was dropped; it may add one whose commit a
			// kill cut short (whole: its pack was synced before).
			for _, id := range listedIDs(t, listedBefore) {
				if !slices.Contains(now, id) {
					t.Fatalf("iteration %d: repair (finished %v) lost snapshot %s", i, done, id)
				}
			}
			for _, id := range now {
				if seen[id] && !slices.Contains(listedIDs(t, listedBefore), id) {
					t.Fatalf("iteration %d: repair (finished %v) brought back dropped snapshot %s", i, done, id)
				}
			}
		}
		for _, id := range now {
			seen[id] = true
		}
		// The store is whole and usable again without any repair.
		var v struct {
			Damaged []any `json:"damaged"`
		}
		if err := json.Unmarshal(mustRun("verify", "--json"), &v); err != nil || len(v.Damaged) != 0 {
			t.Fatalf("iteration %d (%s killed): verify: %v %v", i, op, v.Damaged, err)
		}
	}
	// One more snapshot, never killed, so that at least one is left to check
	// whatever the size cap dropped: the store still takes them after the
	// crashes.
	edit()
	final := digest(t, dir)
	var last struct {
		ID *string `json:"id"`
	}
	if err := json.Unmarshal(mustRun("snapshot", dir, "--json", "--keep", "8"), &last); err != nil || last.ID == nil {
		t.Fatalf("the last snapshot: %v", err)
	}
	complete = append(complete, known{*last.ID, final})
	// Every snapshot reported complete and still listed restores exactly.
	listing := mustRun("list", dir, "--json")
	checked := 0
	for _, k := range complete {
		if !listed(t, listing, k.id) {
			continue // dropped by keep or the size cap
		}
		mustRun("restore", dir, k.id)
		left, _ := filepath.Glob(filepath.Join(dir, "*", ".casckpt-*"))
		top, _ := filepath.Glob(filepath.Join(dir, ".casckpt-*"))
		if left = append(left, top...); len(left) > 0 {
			t.Fatalf("a completed restore left temporary files: %v", left)
		}
		now := digest(t, dir)
		if len(now) != len(k.tree) {
			t.Fatalf("restore of %s: %d files, want %d", k.id[:12], len(now), len(k.tree))
		}
		for p, h := range k.tree {
			if now[p] != h {
				t.Fatalf("restore of %s: %s differs", k.id[:12], p)
			}
		}
		checked++
	}
	t.Logf("%d iterations; killed %v, finished %v; %d snapshots reported complete, %d still listed and restored exactly",
		iterations, killed, finished, len(complete), checked)
	if checked == 0 {
		t.Fatal("no snapshot was left to check")
	}
	for _, op := range []string{"snapshot", "restore", "gc", "prune", "repair"} {
		if !testing.Short() && (killed[op] == 0 || finished[op] == 0) { // 25 short iterations may miss one
			t.Fatalf("%s was killed %d times and finished %d times: the loop must do both", op, killed[op], finished[op])
		}
	}
}

// listedIDs returns the IDs of a list --json output, in order.
func listedIDs(t *testing.T, listing []byte) []string {
	t.Helper()
	var ids []string
	for _, s := range jsonOf[[]map[string]any](t, string(listing)) {
		ids = append(ids, s["id"].(string))
	}
	return ids
}

func listed(t *testing.T, listing []byte, id string) bool {
	var items []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(listing, &items); err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.ID == id {
			return true
		}
	}
	return false
}
