package main

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"
)

// The end-to-end checks of the Hermes checkpoint manager, through the
// command.

func randomData(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	rand.Read(b)
	return string(b)
}

func storeSize(t *testing.T, e *env) float64 {
	t.Helper()
	return jsonOf[map[string]any](t, e.ok("status", "--json").out)["size_bytes"].(float64)
}

func TestHermesIdenticalFileStoredOnce(t *testing.T) {
	e := newEnv(t)
	a, b := t.TempDir(), t.TempDir()
	blob := randomData(t, 1<<20)
	writeFiles(t, a, map[string]string{"shared.bin": blob})
	writeFiles(t, b, map[string]string{"elsewhere/copy.bin": blob})
	e.ok("snapshot", a)
	one := storeSize(t, e)
	e.ok("snapshot", b)
	if grew := storeSize(t, e) - one; grew > 64<<10 {
		t.Fatalf("a second project with the same 1 MiB file grew the store by %.0f bytes", grew)
	}
}

func TestHermesKeepThreeOfSix(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	for i := range 6 {
		writeFiles(t, dir, map[string]string{"f.txt": randomData(t, 1000), "n": string(rune('a' + i))})
		e.ok("snapshot", dir, "--keep", "3")
	}
	if n := len(jsonOf[[]any](t, e.ok("list", dir, "--json").out)); n != 3 {
		t.Fatalf("keep 3 after six snapshots left %d", n)
	}
}

func TestHermesDeletedProjectIsPrunedAndSpaceReturned(t *testing.T) {
	e := newEnv(t)
	gone := t.TempDir()
	writeFiles(t, gone, map[string]string{"big.bin": randomData(t, 2<<20)})
	e.ok("snapshot", gone)
	before := storeSize(t, e)
	os.RemoveAll(gone)
	pr := jsonOf[map[string]any](t, e.ok("prune", "--retention-days", "0", "--json").out)
	if pr["deleted_orphan"] != 1.0 || pr["snapshots_dropped"] != 1.0 {
		t.Fatalf("prune: %v", pr)
	}
	after := storeSize(t, e)
	if before-after < 2<<20 || pr["bytes_freed"].(float64) < 2<<20 {
		t.Fatalf("store %.0f -> %.0f bytes, prune says %v freed", before, after, pr["bytes_freed"])
	}
	if st := jsonOf[map[string]any](t, e.ok("status", "--json").out); len(st["projects"].([]any)) != 0 {
		t.Fatalf("the orphan project is still listed: %v", st["projects"])
	}
}

func TestHermesLargeFileLeftOutSourcesKept(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"model.bin": randomData(t, 2_000_000), "main.py": "print('hi')\n", "lib/util.py": "x = 1\n"})
	snap := jsonOf[map[string]any](t, e.ok("snapshot", dir, "--max-file-size-mb", "1", "--json").out)
	if snap["files"] != 2.0 {
		t.Fatalf("captured %v files, want the 2 source files", snap["files"])
	}
	ls := jsonOf[[]map[string]any](t, e.ok("ls", dir, "@1", "--json").out)
	for _, it := range ls {
		if it["path"] == "model.bin" {
			t.Fatal("the 2 MB file was captured under a 1 MB cap")
		}
	}
	// The left-out file is the only copy: a restore must not delete it.
	writeFiles(t, dir, map[string]string{"main.py": "print('changed')\n"})
	e.ok("restore", dir, "@1") // the snapshot's own 1 MB limit applies
	if st, err := os.Stat(filepath.Join(dir, "model.bin")); err != nil || st.Size() != 2_000_000 {
		t.Fatal("restore deleted the file left out by the size cap")
	}
}
