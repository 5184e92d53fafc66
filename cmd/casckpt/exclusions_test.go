package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// manyFiles returns n files named f0, f1... under dir, each holding its
// own path.
func manyFiles(dir string, n int) map[string]string {
	files := map[string]string{}
	for i := range n {
		p := fmt.Sprintf("%s/f%d", dir, i)
		files[p] = p + "\n"
	}
	return files
}

// lsPaths lists the paths of snapshot snap of dir (casckpt ls --json).
func lsPaths(t *testing.T, e *env, dir, snap string) map[string]bool {
	t.Helper()
	paths := map[string]bool{}
	for _, entry := range jsonOf[[]map[string]any](t, e.ok("ls", dir, snap, "--json").out) {
		paths[entry["path"].(string)] = true
	}
	return paths
}

// assertFiles fails unless each file of want holds its bytes.
func assertFiles(t *testing.T, dir string, want map[string]string, when string) {
	t.Helper()
	for p, data := range want {
		if b, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(b) != data {
			t.Fatalf("%s: %s holds %q, %v; want %q", when, p, b, err, data)
		}
	}
}

// exclusionTree is a project for --exclude .tox/ --max-dir-files 200: the
// excluded (.tox anywhere; big with 200 untracked files; nest with 200
// below it) and the kept (a .gitignore negation, a directory of 250 with
// a file the git index tracks, 199 files).
func exclusionTree(t *testing.T, dir string) (excluded, kept map[string]string) {
	withGitIndex(t, dir)
	excluded = map[string]string{".tox/py/lib.py": "tox\n", "sub/.tox/x": "x\n"}
	for _, m := range []map[string]string{manyFiles("big", 200), manyFiles("nest/a", 120), manyFiles("nest/b/c", 80)} {
		for p, d := range m {
			excluded[p] = d
		}
	}
	kept = map[string]string{"main.go": "package main\n", "keep/.gitignore": "!.tox/\n", "keep/.tox/k": "negated\n", "cmd/dist/main.go": "tracked\n"}
	for _, m := range []map[string]string{manyFiles("cmd/dist", 250), manyFiles("small", 199)} {
		for p, d := range m {
			kept[p] = d
		}
	}
	writeFiles(t, dir, excluded)
	writeFiles(t, dir, kept)
	return excluded, kept
}

var piExclusions = []string{"--exclude", ".tox/", "--max-dir-files", "200"}

// TestSnapshotExclusions: --exclude and --max-dir-files leave out .tox at
// any depth (not where a .gitignore negates it), a directory of 200
// untracked files and one of 200 below it, and keep 199 files and a
// directory with a tracked file; diff, restore and safe restore of the
// snapshot apply them again, so they neither report nor touch what was
// excluded, even when it changed.
func TestSnapshotExclusions(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	excluded, kept := exclusionTree(t, dir)
	snap := jsonOf[map[string]any](t, e.ok(append([]string{"snapshot", dir, "--json"}, piExclusions...)...).out)
	if snap["files"].(float64) != float64(len(kept)) || snap["excluded_by_default"].(float64) != 0 {
		t.Fatalf("captured %v files (%v excluded by default), want %d (0)", snap["files"], snap["excluded_by_default"], len(kept))
	}
	paths := lsPaths(t, e, dir, "@1")
	for p := range excluded {
		if paths[p] {
			t.Fatalf("the snapshot holds %s", p)
		}
	}
	for p := range kept {
		if !paths[p] {
			t.Fatalf("the snapshot lacks %s", p)
		}
	}
	if r := e.run("cat", dir, "@1", "big/f0"); r.code != 1 {
		t.Fatalf("cat of an excluded file: exit %d", r.code)
	}
	excluded[".tox/py/lib.py"] = "changed since\n"
	excluded["big/new"] = "new\n"
	writeFiles(t, dir, excluded)
	writeFiles(t, dir, map[string]string{"main.go": "changed\n"})
	must(t, os.Remove(filepath.Join(dir, "small/f0")))
	d := jsonOf[map[string]any](t, e.ok("diff", dir, "@1", "--json").out)
	if d["files_changed"].(float64) != 2 {
		t.Fatalf("diff counts %v changes, want main.go and small/f0: %v", d["files_changed"], d["files"])
	}
	e.ok("restore", dir, "@1")
	assertFiles(t, dir, kept, "after restore")
	assertFiles(t, dir, excluded, "after restore")
	writeFiles(t, dir, map[string]string{"main.go": "changed again\n"})
	e.ok("restore", dir, "@1", "--safe")
	assertFiles(t, dir, excluded, "after safe restore")
	if d := jsonOf[map[string]any](t, e.ok("diff", dir, "@1", "--json").out); d["files_changed"].(float64) > 1 {
		t.Fatalf("after the safe restore diff counts %v changes: %v", d["files_changed"], d["files"])
	}
	for _, bad := range [][]string{{"--exclude", ""}, {"--exclude", "!x"}, {"--max-dir-files", "-1"}} {
		if r := e.run(append([]string{"snapshot", dir}, bad...)...); r.code != 2 {
			t.Fatalf("snapshot %q: exit %d, want 2", bad, r.code)
		}
	}
}

// TestUndoKeepsExclusions: undo of a turn whose snapshots excluded .tox and
// a large untracked directory reverts the turn's edit and leaves both
// alone, though the turn made them; a snapshot of an unchanged tree with
// other exclusions than the newest is recorded, for a restore to apply
// them.
func TestUndoKeepsExclusions(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.go": "v1\n"})
	e.ok("snapshot", dir)
	s := jsonOf[map[string]any](t, e.ok(append([]string{"snapshot", dir, "--turn", "t1", "--json"}, piExclusions...)...).out)
	if s["created"] != true {
		t.Fatalf("the same tree with other exclusions was not recorded: %v", s)
	}
	made := manyFiles("gen", 300)
	made[".tox/log"] = "made in the turn\n"
	writeFiles(t, dir, made)
	writeFiles(t, dir, map[string]string{"main.go": "v2\n"})
	e.ok(append([]string{"snapshot", dir, "--turn", "t1", "--end-turn"}, piExclusions...)...)
	if r := e.ok("undo", dir, "--json"); !strings.Contains(r.out, "main.go") {
		t.Fatalf("undo did not revert main.go: %s", r.out)
	}
	assertFiles(t, dir, map[string]string{"main.go": "v1\n"}, "after undo")
	assertFiles(t, dir, made, "after undo")
}
