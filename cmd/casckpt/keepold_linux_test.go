package main

import (
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// TestReleaserExitsAtOnce: the process release starts (argv[0]
// releaseName, nothing else) ends at once, successfully and silently,
// whatever its environment, so the files it inherited are freed then.
func TestReleaserExitsAtOnce(t *testing.T) {
	b := newBinEnv(t)
	c := b.command()
	c.Args = []string{releaseName}
	r := b.runCmd(c)
	if r.code != 0 || r.out != "" || r.err != "" {
		t.Fatalf("releaser: exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	if _, err := os.Stat(b.store()); !os.IsNotExist(err) {
		t.Fatalf("the releaser touched the store: %v", err)
	}
}

// TestBinaryRestoreKeepsTheReplacedFilesForLater: the command restores
// files it replaces and deletes exactly, answers, and leaves no
// temporary file; the replaced files, held open past its end, do not
// hold up its exit (the test would wait on its output pipe otherwise).
func TestBinaryRestoreKeepsTheReplacedFilesForLater(t *testing.T) {
	b := newBinEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a1", "b.txt": "b1", "c.txt": "c1"})
	b.ok("snapshot", dir, "-m", "one")
	writeFiles(t, dir, map[string]string{"a.txt": "a2", "c.txt": "c2", "d.txt": "d2"})
	if err := os.Remove(filepath.Join(dir, "b.txt")); err != nil {
		t.Fatal(err)
	}
	b.ok("snapshot", dir, "-m", "two")
	c := b.command("restore", dir, "@2", "--json")
	c.Stdin = nil
	r := b.runCmd(c)
	if r.code != 0 {
		t.Fatalf("restore: exit %d, stderr %q", r.code, r.err)
	}
	want := map[string]string{"a.txt": "a1", "b.txt": "b1", "c.txt": "c1"}
	if got := readFiles(t, dir); !maps.Equal(got, want) {
		t.Errorf("restored %q, want %q", got, want)
	}
}
