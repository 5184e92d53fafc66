package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// treeFiles returns the regular files under dir, by slash path.
func treeFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameFiles(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	got := treeFiles(t, dir)
	for p, w := range want {
		if g, ok := got[p]; !ok || g != w {
			t.Errorf("%s: %q (present %v), want %q", p, g, ok, w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: unexpected, holds %q", p, got[p])
		}
	}
}

type keptJSON struct {
	Path, Reason string
}

type safeRestoreJSON struct {
	Safe         *bool
	Kept         []keptJSON
	PreRestoreID *string `json:"pre_restore_id"`
}

func TestRecordWriteCommand(t *testing.T) {
	b := newBinEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a": "a", "sub/b": "b"})
	// A project with no snapshot records nothing.
	if doc := jsonOf[map[string]any](t, b.ok("record-write", dir, "a", "--json").out); doc["recorded"] != 0.0 || len(doc) != 1 {
		t.Fatalf("no snapshot: %v", doc)
	}
	b.ok("snapshot", dir)
	if doc := jsonOf[map[string]any](t, b.ok("record-write", dir, "a", filepath.Join(dir, "sub/b"), "gone", "--json").out); doc["recorded"] != 3.0 {
		t.Fatalf("recorded %v", doc)
	}
	// Without DIR, paths are relative to the current directory.
	c := b.command("record-write", "a", "sub")
	c.Dir = dir
	if r := b.runCmd(c); r.code != 0 || r.out != "recorded 2 writes\n" {
		t.Fatalf("record-write in the project: %d %q %q", r.code, r.out, r.err)
	}
	outside := t.TempDir()
	for _, p := range []string{"../x", filepath.Join(outside, "x"), dir} {
		r := b.run("record-write", dir, "a", p, "--json")
		failsWith(t, r, 1, "project directory")
		if doc := jsonOf[map[string]any](t, r.out); doc["error"] == nil {
			t.Fatalf("%s: JSON %v", p, doc)
		}
	}
	failsWith(t, b.run("record-write"), 2, "")
}

// Agents that record their writes: a safe restore puts back what is still
// as they wrote it (edits, files they made, files they deleted) and keeps
// a person's edit made after the agent's write.
func TestSafeRestoreWithRecordedWrites(t *testing.T) {
	b := newBinEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f": "f0", "g": "g0", "h": "h0", "p": "p0"})
	b.ok("snapshot", dir)
	writeFiles(t, dir, map[string]string{"f": "agent", "g": "agent", "new/n": "agent"})
	os.Remove(filepath.Join(dir, "h"))
	b.ok("record-write", dir, "f", "g", "new/n", "h")
	writeFiles(t, dir, map[string]string{"g": "person", "p": "person"})

	dry := jsonOf[safeRestoreJSON](t, b.ok("restore", dir, "@1", "--safe", "--dry-run", "--json").out)
	if dry.Safe == nil || !*dry.Safe || len(dry.Kept) != 2 {
		t.Fatalf("dry run: %+v", dry)
	}
	r := b.ok("restore", dir, "@1", "--safe", "--json")
	doc := jsonOf[map[string]any](t, r.out)
	if want := []string{"changes", "deleted", "dry_run", "kept", "pre_restore_id", "restored_to", "safe", "skipped", "written"}; !slices.Equal(keys(doc), want) {
		t.Fatalf("keys %v, want %v", keys(doc), want)
	}
	res := jsonOf[safeRestoreJSON](t, r.out)
	want := []keptJSON{{"g", "changed since the agent's last write"}, {"p", "not changed by an agent since the snapshot"}}
	if !*res.Safe || !slices.Equal(res.Kept, want) || res.PreRestoreID == nil {
		t.Fatalf("restore --safe: %s", r.out)
	}
	sameFiles(t, dir, map[string]string{"f": "f0", "g": "person", "h": "h0", "p": "person"})
	if _, err := os.Stat(filepath.Join(dir, "new")); !os.IsNotExist(err) {
		t.Fatalf("the directory the agent made is still there: %v", err)
	}
	// The text lists what was kept.
	writeFiles(t, dir, map[string]string{"f": "agent"})
	b.ok("record-write", dir, "f")
	text := b.ok("restore", dir, "@2", "--safe").out
	if !strings.Contains(text, "kept g: changed since the agent's last write\n") || !strings.HasPrefix(strings.Split(text, "\n")[2], "restored ") {
		t.Fatalf("text output:\n%s", text)
	}
}

// With no turn and no recorded write since the snapshot, --safe restores
// everything, and says so.
func TestSafeRestoreFallsBack(t *testing.T) {
	b := newBinEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a": "a0"})
	b.ok("snapshot", dir)
	writeFiles(t, dir, map[string]string{"a": "someone", "b": "someone"})
	res := jsonOf[safeRestoreJSON](t, b.ok("restore", dir, "@1", "--safe", "--json").out)
	if res.Safe == nil || *res.Safe || res.Kept == nil || len(res.Kept) != 0 {
		t.Fatalf("fallback: %+v", res)
	}
	sameFiles(t, dir, map[string]string{"a": "a0"})
	other := t.TempDir()
	writeFiles(t, other, map[string]string{"a": "a0"})
	b.ok("snapshot", other)
	writeFiles(t, other, map[string]string{"a": "someone"})
	if out := b.ok("restore", other, "@1", "--safe").out; !strings.HasPrefix(out, "nothing is known of agents since ") {
		t.Fatalf("text: %q", out)
	}
}

// A restore's writes count as the agent's: after one, a person's edit of
// a file it wrote is kept by a safe restore, and a file it wrote and
// nobody touched since is restored.
func TestSafeRestoreAfterARestore(t *testing.T) {
	b := newBinEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a": "a0", "b": "b0"})
	b.ok("snapshot", dir)
	writeFiles(t, dir, map[string]string{"a": "a1", "b": "b1"})
	b.ok("snapshot", dir)
	b.ok("restore", dir, "@2") // writes a0 and b0
	writeFiles(t, dir, map[string]string{"a": "person"})
	res := jsonOf[safeRestoreJSON](t, b.ok("restore", dir, "@1", "--safe", "--json").out)
	if res.Safe == nil || !*res.Safe {
		t.Fatalf("safe restore after a restore: %+v", res)
	}
	sameFiles(t, dir, map[string]string{"a": "person", "b": "b1"})
}

// Agents that report their turns: a safe restore puts back what they
// changed in their turns, also by shell command (edits, deletions, new
// files and directories), and keeps a person's edits made between turns
// and after the agent's write.
func TestSafeRestoreAfterTurns(t *testing.T) {
	b := newBinEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a": "a0", "b": "b0", "c": "c0", "keep/me": "k"})
	snap := jsonOf[map[string]any](t, b.ok("snapshot", dir, "--session", "s", "--turn", "t1", "--json").out)["id"].(string)
	// The agent's turn, by shell command: an edit, deletions, new files.
	writeFiles(t, dir, map[string]string{"a": "a1", "made/by/shell": "x", "e": "agent"})
	os.Remove(filepath.Join(dir, "b"))
	os.RemoveAll(filepath.Join(dir, "keep"))
	b.ok("snapshot", dir, "--session", "s", "--turn", "t1", "--end-turn")
	// A person between turns, then a second turn, then the person again.
	writeFiles(t, dir, map[string]string{"c": "person", "p": "person"})
	b.ok("snapshot", dir, "--session", "s", "--turn", "t2")
	writeFiles(t, dir, map[string]string{"e": "agent again", "f": "agent"})
	b.ok("snapshot", dir, "--session", "s", "--turn", "t2", "--end-turn")
	writeFiles(t, dir, map[string]string{"f": "person after the agent"})

	res := jsonOf[safeRestoreJSON](t, b.ok("restore", dir, snap, "--safe", "--json").out)
	wantKept := []keptJSON{
		{"c", "not changed by an agent since the snapshot"},
		{"f", "changed since the agent's last write"},
		{"p", "not changed by an agent since the snapshot"},
	}
	if res.Safe == nil || !*res.Safe || !slices.Equal(res.Kept, wantKept) || res.PreRestoreID == nil {
		t.Fatalf("restore --safe: safe %v, kept %+v", res.Safe, res.Kept)
	}
	sameFiles(t, dir, map[string]string{"a": "a0", "b": "b0", "c": "person", "keep/me": "k", "p": "person", "f": "person after the agent"})
	if _, err := os.Stat(filepath.Join(dir, "made")); !os.IsNotExist(err) {
		t.Fatalf("the directory the agent's shell made is still there: %v", err)
	}
}
