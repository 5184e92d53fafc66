package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tenLines returns ten numbered lines, with line i (from 1) replaced by
// with for each pair of edits.
func tenLines(edits ...any) string {
	ls := make([]string, 10)
	for i := range ls {
		ls[i] = fmt.Sprintf("line %d\n", i+1)
	}
	for i := 0; i+1 < len(edits); i += 2 {
		ls[edits[i].(int)-1] = edits[i+1].(string) + "\n"
	}
	return strings.Join(ls, "")
}

// agentTurn runs turn id through the binary: a snapshot starting it,
// the agent's writes and removals, a snapshot ending it.
func agentTurn(t *testing.T, b *binEnv, dir, id string, files map[string]string, remove ...string) {
	t.Helper()
	b.ok("snapshot", dir, "--turn", id)
	writeFiles(t, dir, files)
	for _, p := range remove {
		if err := os.Remove(filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	b.ok("snapshot", dir, "--turn", id, "--end-turn")
}

// readFiles returns the files of dir by name (one level).
func readFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

// TestUndoMiddleOfFiveTurns: through the binary, undoing the third of
// five turns keeps the turns after it and a person's edits, merges a file
// a later turn changed elsewhere, reports a conflict where a later turn
// changed the same line, and takes a pre-undo snapshot; a dry run first
// changes nothing.
func TestUndoMiddleOfFiveTurns(t *testing.T) {
	b := newBinEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": tenLines(), "b.txt": tenLines(), "c.txt": tenLines(), "old.txt": "old\n"})
	agentTurn(t, b, dir, "t1", map[string]string{"a.txt": tenLines(1, "t1")})
	agentTurn(t, b, dir, "t2", map[string]string{"new.txt": "t2\n"})
	writeFiles(t, dir, map[string]string{"b.txt": tenLines(9, "person")}) // between turns
	agentTurn(t, b, dir, "t3", map[string]string{"a.txt": tenLines(1, "t1", 3, "t3"), "b.txt": tenLines(2, "t3", 9, "person"),
		"c.txt": tenLines(5, "t3"), "t3.txt": "t3\n"}, "old.txt")
	agentTurn(t, b, dir, "t4", map[string]string{"a.txt": tenLines(1, "t1", 3, "t3", 8, "t4")})
	agentTurn(t, b, dir, "t5", map[string]string{"c.txt": tenLines(5, "t5")})
	writeFiles(t, dir, map[string]string{"mine.txt": "after the turns\n"})
	before := readFiles(t, dir)
	listed := b.ok("list", dir, "--json").out

	dry := jsonOf[map[string]any](t, b.ok("undo", dir, "t3", "--dry-run", "--json").out)
	if want := []string{"conflicts", "dry_run", "merged", "pre_undo_id", "reverted", "turn"}; !slices.Equal(keys(dry), want) {
		t.Fatalf("undo JSON keys %v, want %v", keys(dry), want)
	}
	if got := readFiles(t, dir); fmt.Sprint(got) != fmt.Sprint(before) || b.ok("list", dir, "--json").out != listed {
		t.Fatal("the dry run changed something")
	}
	res := jsonOf[map[string]any](t, b.ok("undo", dir, "t3", "--json").out)
	for _, r := range []map[string]any{dry, res} {
		if r["turn"] != "t3" || fmt.Sprint(r["reverted"]) != "[b.txt old.txt t3.txt]" || fmt.Sprint(r["merged"]) != "[a.txt]" {
			t.Errorf("undo: %v", r)
		}
		conflicts := r["conflicts"].([]any)
		if c := conflicts[0].(map[string]any); len(conflicts) != 1 || c["path"] != "c.txt" || !strings.Contains(c["reason"].(string), "same") {
			t.Errorf("conflicts: %v", conflicts)
		}
	}
	if dry["dry_run"] != true || dry["pre_undo_id"] != nil || res["dry_run"] != false {
		t.Errorf("dry run %v, then %v", dry, res)
	}
	want := map[string]string{"a.txt": tenLines(1, "t1", 8, "t4"), "b.txt": tenLines(9, "person"), "c.txt": tenLines(5, "t5"),
		"old.txt": "old\n", "new.txt": "t2\n", "mine.txt": "after the turns\n"}
	if got := readFiles(t, dir); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the undo:\n%v\nwant\n%v", got, want)
	}
	list := jsonOf[[]map[string]any](t, b.ok("list", dir, "--json").out)
	if list[0]["id"] != res["pre_undo_id"] || !strings.HasPrefix(list[0]["reason"].(string), "pre-undo") {
		t.Errorf("newest snapshot %v, want the pre-undo one %v", list[0], res["pre_undo_id"])
	}
}

// TestUndoArgumentsAndRefusals: one argument is DIR when it is a
// directory, else TURN; the default is the newest ended turn; an unknown
// or open turn exits 1 changing nothing, a third argument exits 2.
func TestUndoArgumentsAndRefusals(t *testing.T) {
	b := newBinEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": "start\n"})
	agentTurn(t, b, dir, "t1", map[string]string{"f.txt": "t1\n"})
	agentTurn(t, b, dir, "t2", map[string]string{"g.txt": "t2\n"})
	b.ok("snapshot", dir, "--turn", "open")

	failsWith(t, b.run("undo", dir, "nope"), 1, `turn "nope" not found`)
	failsWith(t, b.run("undo", dir, "open"), 1, "still open")
	failsWith(t, b.run("undo", dir, "t1", "extra"), 2, "unexpected argument")
	inDir := func(args ...string) result {
		c := b.command(args...)
		c.Dir = dir
		return b.runCmd(c)
	}
	failsWith(t, inDir("undo", "nope"), 1, `turn "nope" not found`) // not a directory: a turn
	if r := jsonOf[map[string]any](t, b.ok("undo", dir, "--dry-run", "--json").out); r["turn"] != "t2" {
		t.Fatalf("undo DIR takes the newest ended turn: %v", r)
	}
	if got := readFiles(t, dir); got["f.txt"] != "t1\n" || got["g.txt"] != "t2\n" {
		t.Fatalf("refusals and a dry run changed the tree: %v", got)
	}
	r := inDir("undo", "t1")
	if r.code != 0 || !strings.Contains(r.out, "reverted  f.txt") || !strings.Contains(r.out, "undid turn t1") {
		t.Fatalf("undo TURN in the project: exit %d\n%s%s", r.code, r.out, r.err)
	}
	if got := readFiles(t, dir); got["f.txt"] != "start\n" || got["g.txt"] != "t2\n" {
		t.Fatalf("after undo t1: %v", got)
	}
}
