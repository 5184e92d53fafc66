package main

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDamagedDatabaseNeverCrashes flips bytes all over the store's
// database and runs list, verify and snapshot on it: each must answer
// (success, or exit 1 with one line) within seconds, never panic or hang.
func TestDamagedDatabaseNeverCrashes(t *testing.T) {
	rounds := 100
	if testing.Short() {
		rounds = 15
	}
	// Pack files only: an inline pack is data in the database, which
	// damage to it loses (docs/commands.md, CASCKPT_FILE_PACKS).
	bin := newBinEnv(t).filePacks()
	store := bin.store()
	dir := filepath.Join(bin.home, "project")
	for i := range 30 {
		writeFiles(t, dir, map[string]string{filepath.Join("d", string(rune('a'+i%5)), "f"+string(rune('a'+i))+".txt"): strings.Repeat("line\n", i+1)})
	}
	run := func(args ...string) (int, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		r := bin.runCmd(bin.commandContext(ctx, append([]string{"--store", store}, args...)...))
		if ctx.Err() != nil {
			t.Fatalf("casckpt %v hung on a damaged database", args)
		}
		return r.code, r.err
	}
	if code, errs := run("snapshot", dir); code != 0 {
		t.Fatal(errs)
	}
	first := listing(t, bin, dir)[0]
	db := filepath.Join(store, "casckpt.db")
	orig, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	failed := 0
	for range rounds {
		b := bytes.Clone(orig)
		for range 20 {
			b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
		}
		os.WriteFile(db, b, 0o600)
		for _, args := range [][]string{{"list", dir, "--json"}, {"verify", "--json"}, {"snapshot", dir, "--json"}} {
			code, errs := run(args...)
			if strings.Contains(errs, "goroutine") || code > 1 || (code == 1 && strings.Count(errs, "\n") != 1) {
				t.Fatalf("casckpt %v on a damaged database: exit %d\n%s", args, code, errs)
			}
			if code == 1 {
				failed++
			}
		}
		// Whatever the damage, repair rebuilds a database on which verify
		// is clean and the first snapshot is listed again.
		rc := bin.command("--store", store, "repair", "--json")
		repaired, err := rc.CombinedOutput()
		if err != nil {
			t.Fatalf("repair of a damaged database: %v: %s", err, repaired)
		}
		if out, err := bin.command("--store", store, "verify", "--json").Output(); err != nil {
			t.Fatalf("verify after repair: %v: %s", err, out)
		}
		if ids := listing(t, bin, dir); !slices.Contains(ids, first) {
			t.Fatalf("after repair (%s) the first snapshot %s is not listed: %v", repaired, first, ids)
		}
	}
	os.WriteFile(db, orig, 0o600)
	t.Logf("%d rounds, %d commands refused with one line, none crashed, each repaired", rounds, failed)
}

// listing returns the IDs casckpt list --json prints for dir.
func listing(t *testing.T, b *binEnv, dir string) []string {
	t.Helper()
	out, err := b.command("--store", b.store(), "list", dir, "--json").Output()
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	return listedIDs(t, out)
}

func TestRepairCommand(t *testing.T) {
	e := newEnv(t).filePacks() // it loses or damages pack files, or the database
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "one\n"})
	e.ok("snapshot", dir, "-m", "one")
	writeFiles(t, dir, map[string]string{"a.txt": "two\n"})
	e.ok("snapshot", dir, "-m", "two")
	before := jsonOf[[]map[string]any](t, e.ok("list", dir, "--json").out)

	must(t, os.Remove(filepath.Join(e.store, "casckpt.db")))
	if n := len(jsonOf[[]any](t, e.ok("list", dir, "--json").out)); n != 0 {
		t.Fatalf("%d snapshots listed without a database", n)
	}
	r := jsonOf[map[string]any](t, e.ok("repair", "--json").out)
	if r["snapshots"] != 2.0 || r["projects"] != 1.0 || r["turns"] != 0.0 || r["from_old_database"] != 0.0 || r["old_database"] != nil ||
		len(r["damaged_packs"].([]any)) != 0 || len(r["unreadable_packs"].([]any)) != 0 {
		t.Fatalf("repair --json: %v", r)
	}
	after := jsonOf[[]map[string]any](t, e.ok("list", dir, "--json").out)
	if len(after) != 2 || after[0]["id"] != before[0]["id"] || after[1]["id"] != before[1]["id"] || after[0]["reason"] != "two" {
		t.Fatalf("rebuilt list %v, want %v", after, before)
	}
	out := e.ok("repair").out
	if !strings.Contains(out, "rebuilt the database: 2 snapshots of 1 project (2 from the old database") || !strings.Contains(out, "casckpt verify") {
		t.Fatalf("repair output:\n%s", out)
	}
	e.ok("restore", dir, "@2")
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "one\n" {
		t.Fatalf("restore after repair: %q", b)
	}
}

// TestRepairThenANoChangeSnapshotHeals: the newest snapshot's pack is
// lost (its new file's chunk, its trees, the backup of its record). After
// repair, a snapshot of the unchanged tree, the first a host takes (a
// prompt's), stores the lost objects again and repair the backup: verify
// is clean, the snapshot restores byte for byte, and a snapshot of a
// change taken next is whole.
func TestRepairThenANoChangeSnapshotHeals(t *testing.T) {
	bin := newBinEnv(t).filePacks() // it loses or damages pack files, or the database
	dir := filepath.Join(bin.home, "project")
	writeFiles(t, dir, map[string]string{"a.txt": "one\n", "src/x.go": "package x\n"})
	bin.ok("snapshot", dir)
	packs := func() []string {
		names, _ := filepath.Glob(filepath.Join(bin.store(), "packs", "*.pack"))
		return names
	}
	before := packs()
	writeFiles(t, dir, map[string]string{"src/new.go": "package x // new\n"})
	newest := jsonOf[map[string]any](t, bin.ok("snapshot", dir, "--json").out)["id"].(string)
	for _, p := range packs() {
		if !slices.Contains(before, p) {
			must(t, os.Remove(p))
		}
	}
	if r := bin.run("verify"); r.code != 1 {
		t.Fatalf("verify of a store that lost a pack: exit %d", r.code)
	}
	bin.ok("repair")
	if doc := jsonOf[map[string]any](t, bin.ok("snapshot", dir, "--json").out); doc["created"] != false || doc["id"] != newest {
		t.Fatalf("snapshot of the unchanged tree: %v", doc)
	}
	if r := bin.run("verify", "--json"); r.code != 0 {
		t.Fatalf("verify after repair and a no-change snapshot: exit %d\n%s%s", r.code, r.out, r.err)
	}
	writeFiles(t, dir, map[string]string{"src/x.go": "package x // changed\n"})
	bin.ok("snapshot", dir)
	bin.ok("verify")
	bin.ok("restore", dir, newest)
	for p, want := range map[string]string{"a.txt": "one\n", "src/x.go": "package x\n", "src/new.go": "package x // new\n"} {
		if got, _ := os.ReadFile(filepath.Join(dir, p)); string(got) != want {
			t.Fatalf("%s restored as %q, want %q", p, got, want)
		}
	}
}
