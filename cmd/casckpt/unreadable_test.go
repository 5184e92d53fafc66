package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/internal/testtree"
)

// TestUnreadableFilesAndDirectories: files and directories the user cannot
// read are warned about, left out of the snapshot, and never touched by a
// restore, which restores everything around them. Run as nobody where the
// tests run as root.
func TestUnreadableFilesAndDirectories(t *testing.T) {
	if !testtree.AsUnprivileged(t) {
		return
	}
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.go": "v1\n", "secret.txt": "mine\n", "locked/inner.txt": "inside\n", "open/a.txt": "a\n"})
	must(t, os.Chmod(filepath.Join(dir, "secret.txt"), 0))
	must(t, os.Chmod(filepath.Join(dir, "locked"), 0))
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "locked"), 0o755) })

	r := e.ok("snapshot", dir, "--json")
	snap := jsonOf[map[string]any](t, r.out)
	if snap["files"].(float64) != 2 {
		t.Fatalf("captured %v files, want main.go and open/a.txt", snap["files"])
	}
	for _, name := range []string{"secret.txt", "locked"} {
		if !strings.Contains(r.err, name) {
			t.Errorf("no warning names %s: %q", name, r.err)
		}
	}
	if ls := e.ok("ls", dir, "@1").out; strings.Contains(ls, "secret") || strings.Contains(ls, "locked") {
		t.Fatalf("the snapshot lists what could not be read:\n%s", ls)
	}

	// Edit around them and go back: the unreadable entries stay as they are.
	writeFiles(t, dir, map[string]string{"main.go": "v2\n", "new.txt": "new\n"})
	must(t, os.Remove(filepath.Join(dir, "open/a.txt")))
	if d := jsonOf[map[string]any](t, e.ok("diff", dir, "@1", "--json").out); d["files_changed"].(float64) != 3 {
		t.Fatalf("diff counts %v changes, want main.go, new.txt and open/a.txt", d["files_changed"])
	}
	e.ok("restore", dir, "@1")
	must(t, os.Chmod(filepath.Join(dir, "locked"), 0o755))
	must(t, os.Chmod(filepath.Join(dir, "secret.txt"), 0o600))
	want := testtree.Tree{"main.go": {Data: "v1\n"}, "open": {Dir: true}, "open/a.txt": {Data: "a\n"},
		"secret.txt": {Data: "mine\n"}, "locked": {Dir: true}, "locked/inner.txt": {Data: "inside\n"}}
	if diff := testtree.Equal(want, testtree.Read(t, dir)); diff != "" {
		t.Fatalf("after restore: %s", diff)
	}
	e.ok("verify")
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestUnreadableIsNotDeleted: a file the snapshot could not read is
// recorded as not captured (snapshot --json names it in unreadable), so
// once it is readable again no diff shows it deleted or added, a restore
// of that snapshot neither deletes nor rewrites it, and the next snapshot
// captures it. Run as nobody where the tests run as root.
func TestUnreadableIsNotDeleted(t *testing.T) {
	if !testtree.AsUnprivileged(t) {
		return
	}
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.go": "v1\n", "secret.txt": "mine\n", "locked/inner.txt": "inside\n"})
	e.ok("snapshot", dir) // #1: everything readable
	secret, locked := filepath.Join(dir, "secret.txt"), filepath.Join(dir, "locked")
	must(t, os.Chmod(secret, 0))
	must(t, os.Chmod(locked, 0))
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	writeFiles(t, dir, map[string]string{"main.go": "v2\n"})
	snap := jsonOf[map[string]any](t, e.ok("snapshot", dir, "--json").out) // #2: neither could be read
	if got := fmt.Sprint(snap["unreadable"]); got != "[locked secret.txt]" {
		t.Errorf("unreadable %s, want [locked secret.txt]", got)
	}
	// While they cannot be read, the working tree does not lack them.
	d := jsonOf[map[string]any](t, e.ok("diff", dir, "@2", "--json").out)
	if fmt.Sprint(d["files_changed"]) != "1" {
		t.Errorf("diff from the snapshot that read them to the tree that cannot: %v, want main.go alone", d["files"])
	}
	must(t, os.Chmod(secret, 0o644))
	must(t, os.Chmod(locked, 0o755))
	writeFiles(t, dir, map[string]string{"secret.txt": "mine, later\n", "locked/inner.txt": "inside, later\n"})

	// @1 is the snapshot that could not read them, @2 the one before.
	for _, args := range [][]string{{"@2", "@1"}, {"@1", "@2"}, {"@1"}} {
		d := jsonOf[map[string]any](t, e.ok(append([]string{"diff", dir, "--json"}, args...)...).out)
		for _, f := range d["files"].([]any) {
			if p := f.(map[string]any)["path"].(string); p != "main.go" {
				t.Errorf("diff %v shows %s %s: it was not captured, not deleted", args, p, f.(map[string]any)["status"])
			}
		}
	}
	if ls := e.ok("ls", dir, "@1").out; strings.Contains(ls, "secret") || strings.Contains(ls, "locked") {
		t.Fatalf("ls shows what was not captured:\n%s", ls)
	}
	failsWith(t, e.run("cat", dir, "@1", "secret.txt"), 1, "secret.txt")

	e.ok("restore", dir, "@1") // the pre-restore snapshot captures them again
	want := testtree.Tree{"main.go": {Data: "v2\n"}, "secret.txt": {Data: "mine, later\n"},
		"locked": {Dir: true}, "locked/inner.txt": {Data: "inside, later\n"}}
	if diff := testtree.Equal(want, testtree.Read(t, dir)); diff != "" {
		t.Fatalf("restoring the snapshot that could not read them: %s", diff)
	}
	if ls := e.ok("ls", dir, "@1").out; !strings.Contains(ls, "secret.txt") || !strings.Contains(ls, "locked/inner.txt") {
		t.Fatalf("the snapshot after they became readable lacks them:\n%s", ls)
	}
	// Their history: added by the first snapshot, not deleted and added
	// again; and the list counts only main.go as changed by the second.
	for _, p := range []string{"secret.txt", "locked/inner.txt"} {
		var got []string
		for _, l := range jsonOf[[]map[string]any](t, e.ok("log", dir, p, "--json").out) {
			got = append(got, l["status"].(string))
		}
		if fmt.Sprint(got) != "[added]" {
			t.Errorf("log %s: %v, want [added]", p, got)
		}
	}
	if l := jsonOf[[]map[string]any](t, e.ok("list", dir, "--json").out); len(l) != 3 || l[1]["files_changed"].(float64) != 1 {
		t.Errorf("list: %v; want 3 snapshots, the middle one changing main.go alone", l)
	}
	e.ok("restore", dir, "@2") // the pre-restore one again: it could not read them
	if diff := testtree.Equal(want, testtree.Read(t, dir)); diff != "" {
		t.Fatalf("restoring it again: %s", diff)
	}
	e.ok("verify")
}

// TestUndoLeavesUnreadableAlone: a turn that began while a file could not
// be read did not add it, though its end captured it: undo leaves it.
func TestUndoLeavesUnreadableAlone(t *testing.T) {
	if !testtree.AsUnprivileged(t) {
		return
	}
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.go": "v1\n", "secret.txt": "mine\n"})
	secret := filepath.Join(dir, "secret.txt")
	must(t, os.Chmod(secret, 0))
	e.ok("snapshot", dir, "--turn", "t1")
	must(t, os.Chmod(secret, 0o644))
	writeFiles(t, dir, map[string]string{"main.go": "v2\n"})
	e.ok("snapshot", dir, "--turn", "t1", "--end-turn")
	u := jsonOf[map[string]any](t, e.ok("undo", dir, "t1", "--json").out)
	if got := fmt.Sprint(u["reverted"]); got != "[main.go]" {
		t.Errorf("undo reverted %s, want [main.go]", got)
	}
	want := testtree.Tree{"main.go": {Data: "v1\n"}, "secret.txt": {Data: "mine\n"}}
	if diff := testtree.Equal(want, testtree.Read(t, dir)); diff != "" {
		t.Fatalf("after undo: %s", diff)
	}
}

// TestUndoOfATurnThatEndedUnreadable: a turn whose end could not read a
// file did not delete it; undo neither touches it nor reports it.
func TestUndoOfATurnThatEndedUnreadable(t *testing.T) {
	if !testtree.AsUnprivileged(t) {
		return
	}
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.go": "v1\n", "secret.txt": "mine\n"})
	secret := filepath.Join(dir, "secret.txt")
	e.ok("snapshot", dir, "--turn", "t1")
	must(t, os.Chmod(secret, 0))
	writeFiles(t, dir, map[string]string{"main.go": "v2\n"})
	e.ok("snapshot", dir, "--turn", "t1", "--end-turn")
	must(t, os.Chmod(secret, 0o644))
	writeFiles(t, dir, map[string]string{"secret.txt": "mine, later\n"})
	u := jsonOf[map[string]any](t, e.ok("undo", dir, "t1", "--json").out)
	if got := fmt.Sprint(u["reverted"], u["conflicts"]); got != "[main.go] []" {
		t.Errorf("undo reverted and reported %s, want [main.go] []", got)
	}
	want := testtree.Tree{"main.go": {Data: "v1\n"}, "secret.txt": {Data: "mine, later\n"}}
	if diff := testtree.Equal(want, testtree.Read(t, dir)); diff != "" {
		t.Fatalf("after undo: %s", diff)
	}
}
