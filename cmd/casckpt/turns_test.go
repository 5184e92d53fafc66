package main

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// turnsOf runs turns --json (with args) through the binary.
func turnsOf(t *testing.T, b *binEnv, dir string, args ...string) []map[string]any {
	t.Helper()
	return jsonOf[[]map[string]any](t, b.ok(append([]string{"turns", dir, "--json"}, args...)...).out)
}

func TestTurnsThroughTheBinary(t *testing.T) {
	b := newBinEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "one\n", "gone.txt": "x\ny\n"})
	start := jsonOf[map[string]any](t, b.ok("snapshot", dir, "--session", "s1", "--turn", "t1", "--json").out)
	if want := []string{"bytes", "created", "excluded_by_default", "files", "id", "project", "session", "turn", "unreadable"}; !slices.Equal(keys(start), want) {
		t.Fatalf("snapshot JSON keys %v, want %v", keys(start), want)
	}
	if start["created"] != true || start["session"] != "s1" || start["turn"] != "t1" {
		t.Fatalf("a turn's first snapshot: %v", start)
	}
	if open := turnsOf(t, b, dir); len(open) != 1 || open[0]["end"] != nil || open[0]["ended"] != nil || open[0]["start"] != start["id"] {
		t.Fatalf("an open turn: %v", open)
	}
	writeFiles(t, dir, map[string]string{"a.txt": "one\ntwo\nthree\n", "new.txt": "n\n"})
	os.Remove(filepath.Join(dir, "gone.txt"))
	end := jsonOf[map[string]any](t, b.ok("snapshot", dir, "--session", "s1", "--turn", "t1", "--end-turn", "--json").out)

	// A turn that starts on an unchanged tree is recorded against the
	// newest snapshot.
	same := jsonOf[map[string]any](t, b.ok("snapshot", dir, "--session", "s2", "--turn", "t2", "--json").out)
	if same["created"] != false || same["id"] != end["id"] || same["turn"] != "t2" || same["session"] != "s2" {
		t.Fatalf("a turn started on an unchanged tree: %v", same)
	}
	turns := turnsOf(t, b, dir)
	want := []string{"deletions", "dropped", "end", "end_number", "ended", "files_changed", "insertions", "interrupted", "session", "start", "start_number", "started", "title", "turn", "undone_by"}
	if len(turns) != 2 || !slices.Equal(keys(turns[0]), want) {
		t.Fatalf("turns: %v, keys want %v", turns, want)
	}
	t2, t1 := turns[0], turns[1]
	if t2["turn"] != "t2" || t2["start"] != end["id"] || t2["end"] != nil || t2["files_changed"] != 0.0 || t2["session"] != "s2" {
		t.Fatalf("the open turn t2: %v", t2)
	}
	if t1["turn"] != "t1" || t1["start"] != start["id"] || t1["end"] != end["id"] || t1["ended"] == nil || len(t1["dropped"].([]any)) != 0 {
		t.Fatalf("the ended turn t1: %v", t1)
	}
	// The stable numbers of the turns' snapshots: t1 went from #1 to #2.
	if t1["start_number"] != 1.0 || t1["end_number"] != 2.0 || t2["start_number"] != 2.0 || t2["end_number"] != nil {
		t.Fatalf("turns' #N: t1 %v..%v, t2 %v..%v", t1["start_number"], t1["end_number"], t2["start_number"], t2["end_number"])
	}
	if text := b.ok("turns", dir).out; !strings.Contains(text, " @1 #2 "+end["id"].(string)[:12]+" ") || !strings.Contains(text, " @2 #1 "+start["id"].(string)[:12]+" ") {
		t.Fatalf("turns text does not show @N #N beside the IDs:\n%s", text)
	}
	// a.txt +2, new.txt +1, gone.txt -2: as list counts them.
	if t1["files_changed"] != 3.0 || t1["insertions"] != 3.0 || t1["deletions"] != 2.0 {
		t.Fatalf("t1's counts: %v", t1)
	}
	if s2 := turnsOf(t, b, dir, "--session", "s2"); len(s2) != 1 || s2[0]["turn"] != "t2" {
		t.Fatalf("turns --session s2: %v", s2)
	}

	writeFiles(t, dir, map[string]string{"plain.txt": "p\n"})
	b.ok("snapshot", dir)
	list := jsonOf[[]map[string]any](t, b.ok("list", dir, "--json").out)
	if len(list) != 3 || list[0]["session"] != nil || list[0]["turn"] != nil || list[1]["turn"] != "t1" || list[2]["session"] != "s1" {
		t.Fatalf("list's labels: %v", list)
	}
	s1 := jsonOf[[]map[string]any](t, b.ok("list", dir, "--session", "s1", "--json").out)
	if len(s1) != 2 || s1[0]["id"] != end["id"] || s1[1]["id"] != start["id"] || s1[0]["files_changed"] != 3.0 {
		t.Fatalf("list --session s1: %v", s1)
	}
	if none := b.ok("list", dir, "--session", "s9", "--json").out; strings.TrimSpace(none) != "[]" {
		t.Fatalf("list of a session with no snapshots: %q", none)
	}
	if out := b.ok("list", dir, "--session", "s1").out; !strings.Contains(out, "@2 ") || !strings.Contains(out, "t1") || strings.Contains(out, "@1 ") {
		t.Fatalf("list --session numbers snapshots as the project does:\n%s", out)
	}
	if out := b.ok("turns", dir).out; !strings.Contains(out, "t2") || !strings.Contains(out, "open") || !strings.Contains(out, "3 files +3 -2") {
		t.Fatalf("turns for people:\n%s", out)
	}
}

func TestTurnFlagsAreChecked(t *testing.T) {
	b := newBinEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a"})
	failsWith(t, b.run("snapshot", dir, "--end-turn"), 2, "--end-turn needs --turn")
	failsWith(t, b.run("snapshot", dir, "--session", "s", "--end-turn"), 2, "--end-turn needs --turn")
	for _, bad := range []string{"", "two\nlines", strings.Repeat("x", 129), "\xff\xfe", "tab\there"} {
		failsWith(t, b.run("snapshot", dir, "--turn", bad), 2, "--turn")
		failsWith(t, b.run("snapshot", dir, "--session", bad, "--turn", "t"), 2, "--session")
		failsWith(t, b.run("list", dir, "--session", bad), 2, "--session")
		failsWith(t, b.run("turns", dir, "--session", bad), 2, "--session")
	}
	// A NUL cannot pass through exec: in-process.
	e := newEnv(t)
	failsWith(t, e.run("snapshot", dir, "--turn", "nul\x00"), 2, "--turn")
	if _, err := os.Stat(b.store()); !os.IsNotExist(err) {
		t.Fatal("a refused snapshot wrote to the store")
	}
	ok := jsonOf[map[string]any](t, b.ok("snapshot", dir, "--turn", strings.Repeat("é", 64), "--json").out)
	if ok["turn"] != strings.Repeat("é", 64) || ok["session"] != nil {
		t.Fatalf("a 128-byte turn ID: %v", ok)
	}
}

func TestKeepDropsATurnsStart(t *testing.T) {
	b := newBinEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": "1\n"})
	start := jsonOf[map[string]any](t, b.ok("snapshot", dir, "--turn", "t1", "--json").out)
	writeFiles(t, dir, map[string]string{"f.txt": "2\n"})
	b.ok("snapshot", dir, "--turn", "t1", "--end-turn")
	writeFiles(t, dir, map[string]string{"f.txt": "3\n"})
	b.ok("snapshot", dir, "--keep", "2")
	turns := turnsOf(t, b, dir)
	if len(turns) != 1 || turns[0]["start"] != start["id"] || !reflect.DeepEqual(turns[0]["dropped"], []any{"start"}) || turns[0]["files_changed"] != 0.0 {
		t.Fatalf("a turn whose start keep dropped: %v", turns)
	}
	if out := b.ok("turns", dir).out; !strings.Contains(out, "(start dropped)") {
		t.Fatalf("turns does not mark the dropped start:\n%s", out)
	}
	// Once its end goes too, so does the turn.
	writeFiles(t, dir, map[string]string{"f.txt": "4\n"})
	b.ok("snapshot", dir, "--keep", "1")
	if turns := turnsOf(t, b, dir); len(turns) != 0 {
		t.Fatalf("a turn with no snapshot left: %v", turns)
	}
}

func TestRepairRebuildsTurns(t *testing.T) {
	b := newBinEnv(t).filePacks() // it loses or damages pack files, or the database
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": "1\n"})
	b.ok("snapshot", dir, "--session", "s", "--turn", "t1")
	writeFiles(t, dir, map[string]string{"f.txt": "1\n2\n"})
	b.ok("snapshot", dir, "--session", "s", "--turn", "t1", "--end-turn")
	b.ok("snapshot", dir, "--session", "s", "--turn", "t2") // unchanged tree
	writeFiles(t, dir, map[string]string{"f.txt": "2\n"})
	b.ok("snapshot", dir, "--turn", "t3", "--end-turn")
	b.ok("gc")
	before := b.ok("turns", dir, "--json").out
	if n := len(jsonOf[[]any](t, before)); n != 3 {
		t.Fatalf("%d turns before repair", n)
	}
	if err := os.Remove(filepath.Join(b.store(), "casckpt.db")); err != nil {
		t.Fatal(err)
	}
	b.ok("repair")
	if after := b.ok("turns", dir, "--json").out; after != before {
		t.Fatalf("turns after repair:\n%s\nbefore:\n%s", after, before)
	}
}
