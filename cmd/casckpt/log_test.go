package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// logHistory snapshots five steps of a project through b: src/a.go added,
// modified, src/b.go turned into a link, src/a.go deleted, and a file
// outside src added.
func logHistory(t *testing.T, b *binEnv) string {
	t.Helper()
	dir := t.TempDir()
	steps := []func(){
		func() { writeFiles(t, dir, map[string]string{"src/a.go": "1\n2\n", "src/b.go": "x\n"}) },
		func() { writeFiles(t, dir, map[string]string{"src/a.go": "1\n3\n4\n"}) },
		func() {
			os.Remove(filepath.Join(dir, "src/b.go"))
			if err := os.Symlink("a.go", filepath.Join(dir, "src/b.go")); err != nil {
				t.Fatal(err)
			}
		},
		func() { os.Remove(filepath.Join(dir, "src/a.go")) },
		func() { writeFiles(t, dir, map[string]string{"other.txt": "o\n"}) },
	}
	for i, step := range steps {
		step()
		b.ok("snapshot", dir, "-m", fmt.Sprint("s", i+1))
	}
	return dir
}

// logLines is a log document as "reason status +ins -del" lines, after
// checking that every entry holds exactly the contract's fields.
func logLines(t *testing.T, out string) []string {
	t.Helper()
	want := []string{"deletions", "id", "insertions", "number", "reason", "session", "short_id", "status", "time", "turn"}
	var lines []string
	for _, e := range jsonOf[[]map[string]any](t, out) {
		if !slices.Equal(keys(e), want) {
			t.Fatalf("log entry keys %v, want %v", keys(e), want)
		}
		id, short := e["id"].(string), e["short_id"].(string)
		if len(id) != 64 || !strings.HasPrefix(id, short) || short == "" || e["turn"] != nil || e["session"] != nil {
			t.Fatalf("log entry %v", e)
		}
		lines = append(lines, fmt.Sprintf("%s %s +%v -%v", e["reason"], e["status"], e["insertions"], e["deletions"]))
	}
	return lines
}

func TestLogThroughTheBinary(t *testing.T) {
	b := newBinEnv(t)
	dir := logHistory(t, b)
	for _, c := range []struct {
		path string
		want []string
	}{
		{"src/a.go", []string{"s4 deleted +0 -3", "s2 modified +2 -1", "s1 added +2 -0"}},
		{"src/b.go", []string{"s3 type-changed +1 -1", "s1 added +1 -0"}},
		// A directory: the lines of the files below it that changed.
		{"src", []string{"s4 modified +0 -3", "s3 modified +1 -1", "s2 modified +2 -1", "s1 added +3 -0"}},
		{"./src/", []string{"s4 modified +0 -3", "s3 modified +1 -1", "s2 modified +2 -1", "s1 added +3 -0"}},
		{filepath.Join(dir, "src", "a.go"), []string{"s4 deleted +0 -3", "s2 modified +2 -1", "s1 added +2 -0"}},
		{"other.txt", []string{"s5 added +1 -0"}},
		{".", []string{"s5 modified +1 -0", "s4 modified +0 -3", "s3 modified +1 -1", "s2 modified +2 -1", "s1 added +3 -0"}},
	} {
		if got := logLines(t, b.ok("log", dir, c.path, "--json").out); !slices.Equal(got, c.want) {
			t.Errorf("log %s:\n got %q\nwant %q", c.path, got, c.want)
		}
	}
	// A path no snapshot holds has an empty log.
	if out := b.ok("log", dir, "never.txt", "--json").out; strings.TrimSpace(out) != "[]" {
		t.Fatalf("log of a path never present: %q", out)
	}
	if out := b.ok("log", dir, "src/a.go/under-a-file").out; out != "no snapshot holds src/a.go/under-a-file\n" {
		t.Fatalf("text log of a path never present: %q", out)
	}
	// With one argument, PATH is relative to the current directory's project.
	c := b.command("log", "src/a.go", "--json")
	c.Dir = dir
	if r := b.runCmd(c); r.code != 0 || len(logLines(t, r.out)) != 3 {
		t.Fatalf("log PATH in the project: %d %q %q", r.code, r.out, r.err)
	}
	for _, outside := range []string{"../x", filepath.Join(filepath.Dir(dir), "x")} {
		r := b.run("log", dir, outside, "--json")
		failsWith(t, r, 1, "outside the project directory")
		if jsonOf[map[string]any](t, r.out)["error"] == nil {
			t.Fatalf("log %s: stdout %q", outside, r.out)
		}
	}
	failsWith(t, b.run("log", dir, "a", "b"), 2, "")
}

func TestLogText(t *testing.T) {
	b := newBinEnv(t)
	dir := logHistory(t, b)
	ids := jsonOf[[]map[string]any](t, b.ok("log", dir, "src/a.go", "--json").out)
	lines := strings.Split(strings.TrimRight(b.ok("log", dir, "src/a.go").out, "\n"), "\n")
	if len(lines) != 4 || strings.Join(strings.Fields(lines[0]), " ") != "@N #N ID WHEN STATUS LINES REASON" {
		t.Fatalf("log text:\n%s", strings.Join(lines, "\n"))
	}
	// Each line names the snapshot's @N now and its stable #N (the JSON's
	// number): s4 is the 4th snapshot taken and, s5 after it, now @2.
	for i, want := range []struct{ at, number, rest string }{{"@2", "#4", "deleted +0 -3 s4"}, {"@4", "#2", "modified +2 -1 s2"}, {"@5", "#1", "added +2 -0 s1"}} {
		f := strings.Fields(lines[i+1])
		if f[0] != want.at || f[1] != want.number || f[2] != ids[i]["short_id"] || strings.Join(f[len(f)-4:], " ") != want.rest ||
			"#"+strconv.Itoa(int(ids[i]["number"].(float64))) != want.number {
			t.Errorf("log line %d: %q (JSON number %v), want %s %s %s ... %s", i+1, lines[i+1], ids[i]["number"], want.at, want.number, ids[i]["short_id"], want.rest)
		}
	}
}

func TestLogOnMissingStoreCreatesNothing(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	if out := e.ok("log", dir, "f", "--json").out; strings.TrimSpace(out) != "[]" {
		t.Fatalf("log on an empty store: %q", out)
	}
	if _, err := os.Stat(e.store); !os.IsNotExist(err) {
		t.Fatal("log created the store")
	}
}
