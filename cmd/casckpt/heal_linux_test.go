//go:build linux

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/internal/testtree"
)

// Healing needs room in the store: on a full disk, the restore that would
// overwrite the one intact copy is refused with one line and changes
// neither the tree nor the list.
func TestRestoreHealRefusedOnFullDisk(t *testing.T) {
	b := newBinEnv(t)
	disk := testtree.SmallDisk(t, "4m")
	b.extra = append(b.extra, "CASCKPT_HOME="+filepath.Join(disk, "store"))
	dir := filepath.Join(b.home, "project")
	must(t, os.MkdirAll(dir, 0o755))
	randomFile(t, filepath.Join(dir, "big.bin"), 1<<20)
	first := jsonOf[map[string]any](t, b.ok("snapshot", dir, "--json").out)["id"].(string)
	packs := func() []string { p, _ := filepath.Glob(filepath.Join(disk, "store", "packs", "*.pack")); return p }
	before := packs()
	randomFile(t, filepath.Join(dir, "big.bin"), 1<<20)
	b.ok("snapshot", dir)
	for _, p := range packs() {
		if !slices.Contains(before, p) {
			junkFile(t, p)
		}
	}
	want, _ := os.ReadFile(filepath.Join(dir, "big.bin"))
	list := b.ok("list", dir, "--json").out
	filler := testtree.Fill(t, disk, 64<<10) // room for the records, not for big.bin again

	r := b.run("restore", dir, first)
	if r.code != 1 || strings.Count(r.err, "\n") != 1 || !strings.Contains(r.err, "no space left") || !strings.Contains(r.err, "free some disk space") {
		t.Fatalf("restore that cannot heal: exit %d, %q", r.code, r.err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "big.bin")); string(got) != string(want) {
		t.Fatal("a refused restore changed the tree")
	}
	if after := b.ok("list", dir, "--json").out; after != list {
		t.Fatalf("a refused restore changed the list:\n%s\nwas\n%s", after, list)
	}

	// Space is back: the restore heals, and the bytes come back.
	must(t, os.Remove(filler))
	pre, _ := jsonOf[map[string]any](t, b.ok("restore", dir, first, "--json").out)["pre_restore_id"].(string)
	b.ok("restore", dir, pre)
	if got, _ := os.ReadFile(filepath.Join(dir, "big.bin")); string(got) != string(want) {
		t.Fatal("the pre-restore snapshot does not give back big.bin")
	}
}
