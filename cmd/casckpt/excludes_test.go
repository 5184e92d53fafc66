package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/internal/testtree"
)

// withGitIndex puts the git index that internal/gitindex's testdata/make.sh
// made with git into dir/.git: it tracks build/sub/x.go, dist/d.go,
// go/build/build.go, cmd/dist/main.go and runtime/coverage/cov.go, among
// others.
func withGitIndex(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "gitindex", "testdata", "index-v4.bin"))
	must(t, err)
	must(t, os.MkdirAll(filepath.Join(dir, ".git"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, ".git", "index"), b, 0o644))
}

// TestDefaultExcludesYieldToGit: a directory on the default exclude list
// that the project's git index tracks, or that a .gitignore negation
// brings back, is captured, so deleting a file of it shows in diff and
// restore brings it back; what the list alone leaves out is counted in
// excluded_by_default.
func TestDefaultExcludesYieldToGit(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	withGitIndex(t, dir)
	writeFiles(t, dir, map[string]string{
		"go/build/build.go": "package build\n", "cmd/dist/main.go": "package main\n",
		"build/sub/x.go": "x\n", "build/sub/untracked.go": "u\n", // in a tracked directory
		"target/keep.rs": "fn main() {}\n", ".gitignore": "!target/\n", // negated
		"node_modules/m.js": "m\n", "out/o.txt": "o\n", "app.log": "log\n", // the list alone
		"main.go": "package main\n",
	})
	snap := jsonOf[map[string]any](t, e.ok("snapshot", dir, "--json").out)
	if snap["files"].(float64) != 7 || snap["excluded_by_default"].(float64) != 3 {
		t.Fatalf("captured %v files, %v left out by default; want 7 and 3 (node_modules, out, app.log)", snap["files"], snap["excluded_by_default"])
	}
	if got := fmt.Sprint(snap["unreadable"]); got != "[]" {
		t.Fatalf("unreadable %s, want []", got)
	}
	must(t, os.Remove(filepath.Join(dir, "go/build/build.go")))
	must(t, os.Remove(filepath.Join(dir, "target/keep.rs")))
	d := jsonOf[map[string]any](t, e.ok("diff", dir, "@1", "--json").out)
	if d["files_changed"].(float64) != 2 {
		t.Fatalf("diff counts %v changes, want the two deletions: %v", d["files_changed"], d["files"])
	}
	e.ok("restore", dir, "@1")
	want := testtree.Tree{"go/build/build.go": {Data: "package build\n"}, "target/keep.rs": {Data: "fn main() {}\n"}}
	for p, f := range want {
		if b, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(b) != f.Data {
			t.Errorf("%s after restore: %q, %v", p, b, err)
		}
	}
	if help := e.ok("snapshot", "--help").out; !strings.Contains(help, "node_modules/ dist/ build/") {
		t.Errorf("snapshot --help does not list the default excludes:\n%s", help)
	}
}

// TestDamagedGitIndex: an index that does not parse (or a split index)
// leaves the default list in force, with a warning; the snapshot succeeds.
func TestDamagedGitIndex(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{".git/index": "DIRC not an index", "build/b.go": "b\n", "main.go": "m\n"})
	r := e.ok("snapshot", dir, "--json")
	snap := jsonOf[map[string]any](t, r.out)
	if snap["files"].(float64) != 1 || snap["excluded_by_default"].(float64) != 1 {
		t.Fatalf("captured %v files, %v left out by default; want main.go and build", snap["files"], snap["excluded_by_default"])
	}
	if !strings.Contains(r.err, "git index") {
		t.Fatalf("no warning about the index: %q", r.err)
	}
}
