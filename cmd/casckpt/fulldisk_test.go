//go:build linux

package main

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/internal/testtree"
)

func randomFile(t *testing.T, p string, n int) {
	t.Helper()
	b := make([]byte, n)
	rand.Read(b)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFullStoreDisk(t *testing.T) {
	e := newEnv(t)
	e.store = filepath.Join(testtree.SmallDisk(t, "3m"), "store")
	e.vars["CASCKPT_HOME"] = e.store
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.go": "package main\n", "lib/a.go": "package lib\n"})
	first := jsonOf[map[string]any](t, e.ok("snapshot", dir, "--json").out)["id"].(string)

	// More than the disk holds.
	randomFile(t, filepath.Join(dir, "big.bin"), 6<<20)
	r := e.run("snapshot", dir, "--max-file-size-mb", "20")
	failsWith(t, r, 1, "no space left")
	if !strings.Contains(r.err, "free") {
		t.Fatalf("the message does not say what to do: %q", r.err)
	}
	if left, _ := filepath.Glob(filepath.Join(e.store, "packs", ".tmp-*")); len(left) > 0 {
		t.Fatalf("a failed snapshot left %v", left)
	}
	e.ok("verify")
	if n := len(jsonOf[[]any](t, e.ok("list", dir, "--json").out)); n != 1 {
		t.Fatalf("%d snapshots after the failure, want the first only", n)
	}
	// gc on a full disk fails or succeeds, but loses nothing.
	e.run("gc")
	e.ok("verify")

	// Space is back: everything works again.
	os.Remove(filepath.Join(dir, "big.bin"))
	writeFiles(t, dir, map[string]string{"main.go": "package main // edited\n"})
	e.ok("snapshot", dir)
	e.ok("restore", dir, first)
	if b, _ := os.ReadFile(filepath.Join(dir, "main.go")); string(b) != "package main\n" {
		t.Fatalf("restore after the disk filled: %q", b)
	}
	e.ok("verify")
}

func TestFullProjectDiskDuringRestore(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Join(testtree.SmallDisk(t, "4m"), "project")
	os.MkdirAll(dir, 0o755)
	randomFile(t, filepath.Join(dir, "a.bin"), 1<<20)
	randomFile(t, filepath.Join(dir, "b.bin"), 1<<20)
	snap := jsonOf[map[string]any](t, e.ok("snapshot", dir, "--json").out)["id"].(string)
	oldA, _ := os.ReadFile(filepath.Join(dir, "a.bin"))
	// Rewrite both files and fill the disk: restoring needs room for the
	// temporary copies and cannot have it.
	randomFile(t, filepath.Join(dir, "a.bin"), 1<<20)
	randomFile(t, filepath.Join(dir, "b.bin"), 1<<20)
	newA, _ := os.ReadFile(filepath.Join(dir, "a.bin"))
	filler, _ := os.Create(filepath.Join(dir, "filler.log")) // excluded by default
	buf := make([]byte, 64<<10)
	for {
		if _, err := filler.Write(buf); err != nil {
			break
		}
	}
	filler.Close()
	failsWith(t, e.run("restore", dir, snap), 1, "no space left")
	gotA, _ := os.ReadFile(filepath.Join(dir, "a.bin"))
	if string(gotA) != string(oldA) && string(gotA) != string(newA) {
		t.Fatal("a failed restore left a.bin neither old nor new")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".casckpt-*")); len(left) > 0 {
		t.Fatalf("a failed restore left %v", left)
	}
	e.ok("verify")
	os.Remove(filepath.Join(dir, "filler.log"))
	e.ok("restore", dir, snap)
	if b, _ := os.ReadFile(filepath.Join(dir, "a.bin")); string(b) != string(oldA) {
		t.Fatal("restore once space was back did not restore")
	}
}
