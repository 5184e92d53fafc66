package main

import (
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
