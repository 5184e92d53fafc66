//go:build linux

package main

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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
	a := testtree.Tree{"main.go": {Data: "package main\n"}, "lib/a.go": {Data: "package lib\n"}, "big.bin": {Data: string(big)}, "run.sh": {Data: "#!/bin/sh\n", Exec: true},
		"private.md": {Data: "v1\n"}}
	b := testtree.Edit(testtree.Edit(a, many("b")), testtree.Tree{"lib/b.go": {Data: "package lib // b\n"}, "big.bin": {Data: string(big[:50<<10]) + "b" + string(big[50<<10:])}})
	d := testtree.Edit(a, testtree.Tree{"d.txt": {Data: "d\n"}})
	e := testtree.Edit(d, testtree.Tree{"e.txt": {Data: "e\n"}, "lib/b.go": b["lib/b.go"]}, "main.go") // keeps part of B's pack live
	c := testtree.Edit(testtree.Edit(a, many("c")), testtree.Tree{"main.go": {Data: "package main // c\n"}, "new/c.txt": {Data: "c\n"}, "big.bin": {Data: "c" + string(big)}}, "lib/a.go")
	f := testtree.Edit(e, testtree.Tree{"f.txt": {Data: "f\n"}})
	// CI is C with a person's private.md ignored now: restore (to A) goes
	// from CI, so its pre-restore snapshot must capture that file, which
	// it writes over, though ignored.
	ci := testtree.Edit(c, testtree.Tree{".gitignore": {Data: "private.md\n"}, "private.md": {Data: "mine\n"}})
	trees := map[string]testtree.Tree{"A": a, "B": b, "C": c, "CI": ci, "D": d, "E": e, "F": f}
	maps.Copy(trees, sweepTurnTrees(c))
	return trees
}

// sweepTurnTrees are the project's states for the undo of
// TestFullDiskAtEveryPoint, from C on: a turn starts on TS (C and a text
// file of ten lines) and ends on TE, having deleted C's 600 small files and
// one more, changed line 2 of the text file and made a file; then a
// person changes line 9 and adds a file, leaving the project at TW.
// Undoing the turn gives TU: TS with the person's work kept, the text file
// merged. A safe restore of TS gives TR: TS with the person's file and
// text file kept as they are.
func sweepTurnTrees(c testtree.Tree) map[string]testtree.Tree {
	notes := func(edits ...string) testtree.Entry {
		ls := strings.Split("1 2 3 4 5 6 7 8 9 10", " ")
		for i := 0; i+1 < len(edits); i += 2 {
			n, _ := strconv.Atoi(edits[i])
			ls[n-1] = edits[i+1]
		}
		return testtree.Entry{Data: strings.Join(ls, "\n") + "\n"}
	}
	ts := testtree.Edit(c, testtree.Tree{"notes.txt": notes()})
	gone := []string{"new/c.txt"}
	for p := range ts {
		if strings.HasPrefix(p, "many/") {
			gone = append(gone, p)
		}
	}
	te := testtree.Edit(ts, testtree.Tree{"notes.txt": notes("2", "agent"), "agent.txt": {Data: "agent\n"}}, gone...)
	mine := testtree.Entry{Data: "mine\n"}
	tw := testtree.Edit(te, testtree.Tree{"notes.txt": notes("2", "agent", "9", "person"), "mine.txt": mine})
	tu := testtree.Edit(ts, testtree.Tree{"notes.txt": notes("9", "person"), "mine.txt": mine})
	tr := testtree.Edit(ts, testtree.Tree{"notes.txt": tw["notes.txt"], "mine.txt": mine})
	return map[string]testtree.Tree{"TS": ts, "TE": te, "TW": tw, "TU": tu, "TR": tr}
}

// TestFullDiskAtEveryPoint runs snapshot, gc, restore and undo with the
// disk holding the store and the project full at every point: with 0 bytes
// free, then one step more each time, until the command succeeds. So every
// write (packs, the database, the project's files) meets ENOSPC in turn.
// Each failure must exit 1 with one line that says to free space, leave
// every snapshot intact and a restored or undone tree old or new per file,
// and the same command must succeed once space is back.
//
// Its trees hold no file the user cannot read: it runs as root, to mount
// its small disk, and root reads every file. TestIOErrorsWithUnreadable
// and TestCrashLoopWithUnreadable run as nobody over such files.
func TestFullDiskAtEveryPoint(t *testing.T) {
	disk := testtree.SmallDisk(t, "24m")
	// The free space grows by step each time: 16 KiB in the default run,
	// 4 KiB in the soak (testtree.Size), which meets more of the writes.
	step := testtree.Size[int64](64<<10, 16<<10, 4<<10)
	trees := sweepTrees()
	// "restore" (to A) first takes its pre-restore snapshot of CI (C with
	// an ignored file it writes over, which the snapshot captures), which
	// meets the full disk first. "restore-written" has C snapshotted
	// already and goes to B, whose 600 small files replace C's: its own
	// writes to the project meet it (in 32 KiB steps, as they need 600
	// pages). "undo" takes a small pre-undo snapshot, then re-creates the
	// 600 files its turn deleted, in steps 8 times larger once its
	// snapshot is recorded; "restore-safe", a safe restore to the start of
	// that turn, does the same.
	for _, op := range []string{"snapshot", "gc", "restore", "restore-written", "undo", "restore-safe"} {
		t.Run(op, func(t *testing.T) {
			step := step
			if op == "restore-written" {
				step = 32 << 10 // in every size: it succeeds within a few steps
			}
			free, writing := int64(0), int64(-1)
			for {
				succeeded, wrote := sweepAt(t, disk, trees, op, free)
				if succeeded {
					break
				}
				if wrote && writing < 0 && (op == "undo" || op == "restore-safe") {
					writing, step = free, 8*step
				}
				free += step
			}
			if free == 0 {
				t.Fatalf("%s succeeded with no space free: the sweep tested nothing", op)
			}
			t.Logf("%s failed with 0 to %d bytes free, then succeeded", op, free-step)
			if op == "undo" || op == "restore-safe" {
				if writing < 0 {
					t.Fatalf("%s never failed after its snapshot of the tree before: its writes to the project met no full disk", op)
				}
				t.Logf("%s failed writing to the project (its snapshot of the tree before recorded) from %d bytes free", op, writing)
			}
		})
	}
}

// sweepOps are the commands of TestFullDiskAtEveryPoint's operations, on
// project dir with the snapshots ids, and the trees they go from and to
// (none for those that do not change the project).
func sweepOps(dir string, ids map[string]string) map[string]struct {
	args     []string
	old, new string
} {
	return map[string]struct {
		args     []string
		old, new string
	}{
		"snapshot":        {args: []string{"snapshot", dir}},
		"gc":              {args: []string{"gc"}},
		"restore":         {[]string{"restore", dir, ids["A"]}, "CI", "A"},
		"restore-written": {[]string{"restore", dir, ids["B"]}, "C", "B"},
		"undo":            {[]string{"undo", dir, "t1"}, "TW", "TU"},
		"restore-safe":    {[]string{"restore", dir, ids["TS"], "--safe"}, "TW", "TR"},
	}
}

// sweepAt runs op once with free bytes left on disk, on a new store and
// project (see newSweep), checks what it left whether it failed or not,
// then runs it again with the space back and checks that. It reports
// whether op succeeded on the full disk, and whether it recorded a
// snapshot there (a pre-restore or pre-undo one) before it failed.
func sweepAt(t *testing.T, disk string, trees map[string]testtree.Tree, op string, free int64) (succeeded, recorded bool) {
	e, dir, ids := newSweep(t, disk, trees, op)
	o := sweepOps(dir, ids)[op]
	if op == "gc" {
		e.ok("forget", dir, ids["B"])
		delete(ids, "B")
	}
	filler := testtree.Fill(t, disk, free)
	r := e.run(o.args...)
	if r.code != 0 {
		failsWith(t, r, 1, "no space left")
		if !strings.Contains(r.err, "free some disk space") {
			t.Fatalf("%d bytes free: the message does not say what to do: %q", free, r.err)
		}
	}
	if o.new != "" {
		checkSweepOldOrNew(t, dir, trees[o.old], trees[o.new], free)
		recorded = checkSweepBefore(t, e, dir, ids, trees[o.old], free)
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
	e.ok(o.args...)
	checkSweepRecovered(t, e, dir, ids, free)
	if o.new != "" {
		if diff := testtree.Equal(testtree.WithDirs(trees[o.new]), testtree.Read(t, dir)); diff != "" {
			t.Fatalf("%d bytes free: the %s once space was back: %s", free, op, diff)
		}
	}
	return r.code == 0, recorded
}

// checkSweepOldOrNew fails unless every path of dir is as in tree old or
// tree new, and none is a temporary file.
func checkSweepOldOrNew(t *testing.T, dir string, old, new testtree.Tree, free int64) {
	t.Helper()
	oldTree, newTree := testtree.WithDirs(old), testtree.WithDirs(new)
	for p, got := range testtree.Read(t, dir) {
		if strings.Contains(p, ".casckpt-") {
			t.Fatalf("%d bytes free: the command left %s", free, p)
		}
		if got != oldTree[p] && got != newTree[p] {
			t.Fatalf("%d bytes free: %s is neither old nor new", free, p)
		}
	}
}

// checkSweepBefore checks the snapshots listed that are not in ids: one
// at most, the pre-restore or pre-undo snapshot, holding tree old. It
// reports whether there is one.
func checkSweepBefore(t *testing.T, e *env, dir string, ids map[string]string, old testtree.Tree, free int64) bool {
	t.Helper()
	known := map[string]bool{}
	for _, id := range ids {
		known[id] = true
	}
	var fresh []string
	for _, s := range jsonOf[[]map[string]any](t, e.ok("list", dir, "--json").out) {
		if id := s["id"].(string); !known[id] {
			fresh = append(fresh, id)
		}
	}
	if len(fresh) > 1 {
		t.Fatalf("%d bytes free: %d snapshots recorded, want one at most", free, len(fresh))
	}
	for _, id := range fresh {
		got := testtree.ReadTar(t, strings.NewReader(e.ok("export", dir, id, "-o", "-").out))
		if diff := testtree.Equal(testtree.WithDirs(old), got); diff != "" {
			t.Fatalf("%d bytes free: the snapshot of the tree before: %s", free, diff)
		}
	}
	return len(fresh) == 1
}

// newSweep makes a new store and project under disk/work, snapshots the
// trees A, B, D, E and F, and leaves the project at C, snapshotted too for
// restore-written; for undo and restore-safe, it goes on to snapshot TS
// and TE as the start and end of turn t1, and leaves the project at TW. ids are the
// snapshots' IDs by tree name.
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
	names := []string{"A", "B", "D", "E", "F", "C"}
	if op == "restore" {
		names[len(names)-1] = "CI"
	}
	if op == "undo" || op == "restore-safe" {
		names = append(names, "TS", "TE", "TW")
	}
	for _, name := range names {
		os.RemoveAll(dir)
		testtree.Write(t, dir, trees[name])
		args := []string{"snapshot", dir, "--json", "-m", name}
		switch name {
		case "C", "CI", "TW":
			if op != "restore-written" {
				continue
			}
		case "TS", "TE":
			if args = append(args, "--turn", "t1"); name == "TE" {
				args = append(args, "--end-turn")
			}
		}
		ids[name] = jsonOf[map[string]any](t, e.ok(args...).out)["id"].(string)
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
