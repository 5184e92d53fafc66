package main

import (
	"path/filepath"
	"testing"
)

// TestSmallTurnsWriteNoPackFileUnlessAsked: small turns keep their packs
// in the database (no pack file), restore and verify as ever; with
// CASCKPT_FILE_PACKS=1 every one writes a pack file.
func TestSmallTurnsWriteNoPackFileUnlessAsked(t *testing.T) {
	for _, filePacks := range []bool{false, true} {
		e := newEnv(t)
		if filePacks {
			e.filePacks()
		}
		dir := t.TempDir()
		for _, v := range []string{"one\n", "two\n", "three\n"} {
			writeFiles(t, dir, map[string]string{"a.txt": v, "src/x.go": "package x\n"})
			e.ok("snapshot", dir)
		}
		packs, _ := filepath.Glob(filepath.Join(e.store, "packs", "*.pack"))
		if want := map[bool]int{false: 0, true: 3}[filePacks]; len(packs) != want {
			t.Fatalf("CASCKPT_FILE_PACKS %v: %d pack files after 3 small turns, want %d", filePacks, len(packs), want)
		}
		e.ok("verify")
		e.ok("restore", dir, "@3")
		if got := readFile(t, filepath.Join(dir, "a.txt")); got != "one\n" {
			t.Fatalf("restore of the first turn: a.txt is %q", got)
		}
	}
}
