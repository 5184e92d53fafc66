package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/casckpt/casckpt/internal/testtree"
)

// sweepTrees are the project's states for TestFullDiskAtEveryPoint:
// snapshots of A, B, D, E and F are taken and the tree is left at C. B and
// C each hold 600 small files of their own; once B is forgotten, gc
// rewrites what is left of B's pack and merges the other four.
func sweepTrees() map[string]testtree.Tree {
	rng := rand.New(rand.NewPCG(3, 4))
	big := make([]byte, 96<<10)
	for i := range big {
		big[i] = byte(rng.IntN(256))
	}
	// many small files, so that recording a snapshot or collecting one
	// grows the database, not only the packs
	many := func(tag string) testtree.Tree {
		out := testtree.Tree{}
		for i := range 600 {
			out[fmt.Sprintf("many/%03d.txt", i)] = testtree.Entry{Data: fmt.Sprintf("%s %d\n", tag, i)}
		}
		return out
	}
	a := testtree.Tree{"main.go": {Data: "package main\n"}, "lib/a.go": {Data: "package lib\n"}, "big.bin": {Data: string(big)}, "run.sh": {Data: "#!/bin/sh\n", Exec: true}}
	b := testtree.Edit(testtree.Edit(a, many("b")), testtree.Tree{"lib/b.go": {Data: "package lib // b\n"}, "big.bin": {Data: string(big[:50<<10]) + "b" + string(big[50<<10:])}})
	d := testtree.Edit(a, testtree.Tree{"d.txt": {Data: "d\n"}})
	e := testtree.Edit(d, testtree.Tree{"e.txt": {Data: "e\n"}, "lib/b.go": b["lib/b.go"]}, "main.go") // keeps part of B's pack live
	c := testtree.Edit(testtree.Edit(a, many("c")), testtree.Tree{"main.go": {Data: "package main // c\n"}, "new/c.txt": {Data: "c\n"}, "big.bin": {Data: "c" + string(big)}}, "lib/a.go")
	f := testtree.Edit(e, testtree.Tree{"f.txt": {Data: "f\n"}})
	return map[string]testtree.Tree{"A": a, "B": b, "C": c, "D": d, "E": e, "F": f}
}

// fill leaves exactly free bytes (rounded to the block size) available on
// the file system holding dir, in a file it returns.
func fill(t *testing.T, dir string, free int64) string {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	avail := int64(st.Bavail) * st.Bsize
	name := filepath.Join(dir, "filler")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n := avail - free; n > 0 {
		if err := unix.Fallocate(int(f.Fd()), 0, 0, n); err != nil {
			t.Fatalf("fallocate %d: %v", n, err)
		}
	}
	return name
}

// TestFullDiskAtEveryPoint runs snapshot, gc and restore with the disk
// holding the store and the project full at every point: with 0 bytes
// free, then one step more each time, until the command succeeds. So every
// write (packs, the database, the project's files) meets ENOSPC in turn.
// Each failure must exit 1 with one line that says to free space, leave
// every snapshot intact and a restored tree old or new per file, and the
// same command must succeed once space is back.
func TestFullDiskAtEveryPoint(t *testing.T) {
	disk := smallDisk(t, "24m")
	step := int64(4 << 10)
	if testing.Short() {
		step = 64 << 10
	}
	trees := sweepTrees()
	// "restore" (to A) first takes its pre-restore snapshot of C, which
	// meets the full disk first. "restore-written" has C snapshotted
	// already and goes to B, whose 600 small files replace C's: its own
	// writes to the project meet it (in steps 8 times larger, as they need
	// 600 pages).
	for _, op := range []string{"snapshot", "gc", "restore", "restore-written"} {
		t.Run(op, func(t *testing.T) {
			step := step
			target := "A"
			if op == "restore-written" {
				step, target = 8*step, "B"
			}
			free := int64(0)
			for !sweepAt(t, disk, trees, op, target, free) {
				free += step
			}
			if free == 0 {
				t.Fatalf("%s succeeded with no space free: the sweep tested nothing", op)
			}
			t.Logf("%s failed with 0 to %d bytes free, then succeeded", op, free-step)
		})
	}
}

// sweepAt runs op once with free bytes left on disk, on a new store and
// project (see newSweep), checks what it left whether it failed or not,
// then runs it again with the space back and checks that. It reports
// whether op succeeded on the full disk.
func sweepAt(t *testing.T, disk string, trees map[string]testtree.Tree, op, target string, free int64) (succeeded bool) {
	e, dir, ids := newSweep(t, disk, trees, op)
	args := map[string][]string{
		"snapshot":        {"snapshot", dir},
		"gc":              {"gc"},
		"restore":         {"restore", dir, ids["A"]},
		"restore-written": {"restore", dir, ids["B"]},
	}[op]
	if op == "gc" {
		e.ok("forget", dir, ids["B"])
		delete(ids, "B")
	}
	filler := fill(t, disk, free)
	r := e.run(args...)
	if r.code != 0 {
		failsWith(t, r, 1, "no space left")
		if !strings.Contains(r.err, "free some disk space") {
			t.Fatalf("%d bytes free: the message does not say what to do: %q", free, r.err)
		}
	}
	if strings.HasPrefix(op, "restore") {
		now := testtree.Read(t, dir)
		oldTree, newTree := testtree.WithDirs(trees["C"]), testtree.WithDirs(trees[target])
		for p, got := range now {
			if strings.Contains(p, ".casckpt-") {
				t.Fatalf("%d bytes free: the restore left %s", free, p)
			}
			if got != oldTree[p] && got != newTree[p] {
				t.Fatalf("%d bytes free: %s is neither old nor new", free, p)
			}
		}
	}
	// Reading needs no space: the snapshots are all there and whole.
	e.ok("verify")
	for name, id := range ids {
		if out := e.ok("cat", dir, id, "run.sh").out; out != "#!/bin/sh\n" {
			t.Fatalf("%d bytes free: snapshot %s reads %q", free, name, out)
		}
	}
	// Space is back: the same command works and the store is whole.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	e.ok(args...)
	checkSweepRecovered(t, e, dir, ids, free)
	if strings.HasPrefix(op, "restore") {
		if diff := testtree.Equal(testtree.WithDirs(trees[target]), testtree.Read(t, dir)); diff != "" {
			t.Fatalf("%d bytes free: the restore once space was back: %s", free, diff)
		}
	}
	return r.code == 0
}

// newSweep makes a new store and project under disk/work, snapshots the
// trees A, B, D, E and F, and leaves the project at C, snapshotted too for
// restore-written. ids are the snapshots' IDs by tree name.
func newSweep(t *testing.T, disk string, trees map[string]testtree.Tree, op string) (e *env, dir string, ids map[string]string) {
	work := filepath.Join(disk, "work")
	if err := os.RemoveAll(work); err != nil {
		t.Fatal(err)
	}
	e = newEnv(t)
	e.store = filepath.Join(work, "store")
	e.vars["CASCKPT_HOME"] = e.store
	dir = filepath.Join(work, "project")
	ids = map[string]string{}
	for _, name := range []string{"A", "B", "D", "E", "F", "C"} {
		os.RemoveAll(dir)
		testtree.Write(t, dir, trees[name])
		if name != "C" || op == "restore-written" {
			ids[name] = jsonOf[map[string]any](t, e.ok("snapshot", dir, "--json", "-m", name).out)["id"].(string)
		}
	}
	return e, dir, ids
}

// checkSweepRecovered checks the store once the command has run again
// with space back: it verifies, holds no temporary pack, and still lists
// every snapshot of ids.
func checkSweepRecovered(t *testing.T, e *env, dir string, ids map[string]string, free int64) {
	t.Helper()
	e.ok("verify")
	if left, _ := filepath.Glob(filepath.Join(e.store, "packs", ".tmp-*")); len(left) > 0 {
		t.Fatalf("%d bytes free: temporary packs left: %v", free, left)
	}
	list := jsonOf[[]map[string]any](t, e.ok("list", dir, "--json").out)
	listed := map[string]bool{}
	for _, s := range list {
		listed[s["id"].(string)] = true
	}
	for name, id := range ids {
		if !listed[id] {
			t.Fatalf("%d bytes free: snapshot %s was lost", free, name)
		}
	}
}
