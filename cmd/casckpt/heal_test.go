package main

import (
	"os"
	"path/filepath"
	"testing"
)

// The newest state's data is damaged and the tree is unchanged since: a
// plain restore of the state before, whole or of one path, and undo of
// the turn store the tree's bytes again before overwriting them, so the
// snapshot from before the change gives them back exactly.
func TestRestoreHealsTheOnlyIntactCopy(t *testing.T) {
	for name, args := range map[string][]string{
		"whole": {"restore", "", "@2", "--json"},
		"path":  {"restore", "", "@2", "checkpoint.json", "--json"},
	} {
		t.Run(name, func(t *testing.T) {
			b := newBinEnv(t)
			s := newHostSession(t, b, 4)
			s.corrupt(4)
			args[1] = s.dir
			res := jsonOf[map[string]any](t, b.ok(args...).out)
			pre, _ := res["pre_restore_id"].(string)
			if got, _ := os.ReadFile(filepath.Join(s.dir, "checkpoint.json")); res["restored_to"] != s.ids[2] || pre == "" || string(got) != stepState(3) {
				t.Fatalf("restore over the one intact copy: %v, %q", res, got)
			}
			b.ok("restore", s.dir, pre, "checkpoint.json")
			if got, _ := os.ReadFile(filepath.Join(s.dir, "checkpoint.json")); string(got) != stepState(4) {
				t.Fatalf("the pre-restore snapshot gave back %q, want %q", got, stepState(4))
			}
		})
	}
}

// undo of a turn that put back bytes first stored by an older snapshot,
// whose pack is now damaged: the tree holds their one intact copy, and
// undo stores it again before it reverts the file, so the pre-undo
// snapshot gives it back.
func TestUndoHealsTheOnlyIntactCopy(t *testing.T) {
	b := newBinEnv(t).filePacks() // it loses or damages pack files, or the database
	dir := filepath.Join(b.home, "project")
	must(t, os.MkdirAll(dir, 0o755))
	f := filepath.Join(dir, "notes.txt")
	packs := func() []string { p, _ := filepath.Glob(filepath.Join(b.store(), "packs", "*.pack")); return p }
	must(t, os.WriteFile(f, []byte("the agent's final notes\n"), 0o644))
	b.ok("snapshot", dir)
	first := packs()
	must(t, os.WriteFile(f, []byte("a draft\n"), 0o644))
	b.ok("snapshot", dir, "--session", "s1", "--turn", "t1")
	must(t, os.WriteFile(f, []byte("the agent's final notes\n"), 0o644))
	b.ok("snapshot", dir, "--session", "s1", "--turn", "t1", "--end-turn")
	for _, p := range first {
		junkFile(t, p)
	}

	res := jsonOf[map[string]any](t, b.ok("undo", dir, "t1", "--json").out)
	pre, _ := res["pre_undo_id"].(string)
	if got, _ := os.ReadFile(f); pre == "" || string(got) != "a draft\n" {
		t.Fatalf("undo over the one intact copy: %v, %q", res, got)
	}
	b.ok("restore", dir, pre, "notes.txt")
	if got, _ := os.ReadFile(f); string(got) != "the agent's final notes\n" {
		t.Fatalf("the pre-undo snapshot gave back %q", got)
	}
}
