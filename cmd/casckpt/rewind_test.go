package main

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/internal/s3test"
)

// TestSubdirectoryActsOnProject: every command run in a subdirectory of a
// project the store knows acts on that project, its PATHs relative to the
// subdirectory, as git does; --here keeps the subdirectory a project of
// its own.
func TestSubdirectoryActsOnProject(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"top.txt": "top\n", "src/f.txt": "one\n", "src/deep/g.txt": "g\n"})
	e.ok("snapshot", dir, "-m", "first")
	src := filepath.Join(dir, "src")
	t.Chdir(src)

	// snapshot in the subdirectory records the whole project, not a new one.
	writeFiles(t, dir, map[string]string{"src/f.txt": "two\n", "top.txt": "top 2\n"})
	e.ok("snapshot", "-m", "from src")
	status := jsonOf[map[string]any](t, e.ok("status", "--json").out)
	if n := len(status["projects"].([]any)); n != 1 {
		t.Fatalf("snapshot in a subdirectory made %d projects, want 1", n)
	}
	list := jsonOf[[]map[string]any](t, e.ok("list", "--json").out)
	if len(list) != 2 || list[0]["reason"] != "from src" {
		t.Fatalf("list in the subdirectory: %v", list)
	}
	// A mistyped DIR is never taken for the project above it.
	if r := e.run("snapshot", filepath.Join(src, "nope")); r.code != 1 {
		t.Fatalf("snapshot of a missing directory: exit %d %q", r.code, r.err)
	}
	if got := jsonOf[[]map[string]any](t, e.ok("list", "--json").out); len(got) != 2 {
		t.Fatalf("snapshot of a missing directory changed the project: %v", got)
	}

	// PATHs are relative to the subdirectory.
	if out := e.ok("cat", "@2", "f.txt").out; out != "one\n" {
		t.Fatalf("cat @2 f.txt in src: %q", out)
	}
	if log := jsonOf[[]map[string]any](t, e.ok("log", "f.txt", "--json").out); len(log) != 2 {
		t.Fatalf("log f.txt in src: %v", log)
	}
	ls := jsonOf[[]map[string]any](t, e.ok("ls", "@1", "--json").out)
	var paths []string
	for _, it := range ls {
		paths = append(paths, it["path"].(string))
	}
	if strings.Join(paths, " ") != "src/deep src/deep/g.txt src/f.txt" {
		t.Fatalf("ls @1 in src lists %q, want src's entries", paths)
	}
	e.ok("restore", "@2", "f.txt")
	if got, _ := os.ReadFile(filepath.Join(src, "f.txt")); string(got) != "one\n" {
		t.Fatalf("restore @2 f.txt in src wrote %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "top.txt")); string(got) != "top 2\n" {
		t.Fatalf("restore of src/f.txt changed top.txt: %q", got)
	}
	if diff := jsonOf[map[string]any](t, e.ok("diff", "@1", "--json").out); diff["files_changed"] != 1.0 {
		t.Fatalf("diff @1 in src: %v", diff)
	}

	// --here: the subdirectory is its own project.
	e.ok("snapshot", "--here", "-m", "src alone")
	if got := jsonOf[[]map[string]any](t, e.ok("list", "--here", "--json").out); len(got) != 1 || got[0]["reason"] != "src alone" {
		t.Fatalf("list --here: %v", got)
	}
	// Now src is a known project itself: it resolves to itself.
	if got := jsonOf[[]map[string]any](t, e.ok("list", "--json").out); len(got) != 1 {
		t.Fatalf("list in a known nested project: %v", got)
	}
	if got := jsonOf[[]map[string]any](t, e.ok("list", filepath.Join(src, "deep"), "--json").out); len(got) != 1 {
		t.Fatalf("list of a directory below the nested project: %v", got)
	}
}

// TestSubdirectoryThroughTheBinary: the built command, started in a
// subdirectory with no DIR, snapshots the project that holds it.
func TestSubdirectoryThroughTheBinary(t *testing.T) {
	b := newBinEnv(t)
	dir := filepath.Join(b.home, "proj")
	writeFiles(t, dir, map[string]string{"src/a.txt": "a\n"})
	b.ok("snapshot", dir)
	writeFiles(t, dir, map[string]string{"src/a.txt": "b\n"})
	c := b.command("snapshot", "--json")
	c.Dir = filepath.Join(dir, "src")
	r := b.runCmd(c)
	real, _ := filepath.EvalSymlinks(dir)
	if doc := jsonOf[map[string]any](t, r.out); r.code != 0 || doc["project"] != real || doc["created"] != true {
		t.Fatalf("snapshot in src: exit %d, %s %s", r.code, r.out, r.err)
	}
}

// TestStableSnapshotNumbers: #N names a snapshot for good: it does not
// move when snapshots are added or dropped, is never given again, and
// restore says which @N the restored snapshot has become.
func TestStableSnapshotNumbers(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	for _, v := range []string{"1", "2", "3"} {
		writeFiles(t, dir, map[string]string{"f": v})
		e.ok("snapshot", dir, "-m", "v"+v)
	}
	numbers := func() (out []float64) {
		for _, it := range jsonOf[[]map[string]any](t, e.ok("list", dir, "--json").out) {
			out = append(out, it["number"].(float64))
		}
		return out
	}
	if got := numbers(); len(got) != 3 || got[0] != 3 || got[2] != 1 {
		t.Fatalf("numbers %v, want [3 2 1]", got)
	}
	e.ok("forget", dir, "#3")
	writeFiles(t, dir, map[string]string{"f": "4"})
	e.ok("snapshot", dir, "-m", "v4")
	if got := numbers(); len(got) != 3 || got[0] != 4 || got[1] != 2 || got[2] != 1 {
		t.Fatalf("after forget #3 and a new snapshot: numbers %v, want [4 2 1]", got)
	}
	if out := e.ok("cat", dir, "#2", "f").out; out != "2" {
		t.Fatalf("cat #2: %q", out)
	}
	// Restoring #1 twice (a command re-run from shell history) restores
	// the same snapshot, though @N moved; the output says where it is now.
	for range 2 {
		writeFiles(t, dir, map[string]string{"f": "edit"})
		out := e.ok("restore", dir, "#1").out
		if got, _ := os.ReadFile(filepath.Join(dir, "f")); string(got) != "1" {
			t.Fatalf("restore #1 wrote %q", got)
		}
		place := strings.Fields(strings.TrimSuffix(strings.SplitN(out, ":", 2)[0], ")"))
		if n := len(numbers()); len(place) != 5 || place[2] != "(#1," || place[4] != "@"+string(rune('0'+n)) {
			t.Fatalf("restore output %q does not say #1 is now @%d", out, n)
		}
	}
	if got := jsonOf[[]map[string]any](t, e.ok("list", dir, "--json").out); got[len(got)-1]["number"] != 1.0 {
		t.Fatalf("the oldest snapshot is no longer #1: %v", got)
	}
	failsWith(t, e.run("cat", dir, "#3", "f"), 1, "not found")
	for _, bad := range []string{"#0", "#x", "#01"} {
		if r := e.run("cat", dir, bad, "f"); r.code == 0 || !strings.Contains(r.err, "#N needs a whole number") {
			t.Errorf("cat %s: exit %d %q", bad, r.code, r.err)
		}
	}
	if text := e.ok("list", dir).out; !strings.Contains(text, "@N  #N  ID") || !strings.Contains(text, "\n@4  #1  ") {
		t.Fatalf("list text does not show @N and #N:\n%s", text)
	}
}

// TestUsageErrorsSayWhatIsMissing: a wrong number of arguments is one line
// that names what is missing or unexpected (never cobra's "requires at
// least 1 arg(s)"), and --json gets {"error", "exit"} for usage errors and
// failures alike.
func TestUsageErrorsSayWhatIsMissing(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"restore"}, "restore needs SNAP: restore [DIR] SNAP [PATH...] [--safe]"},
		{[]string{"cat"}, "cat needs SNAP and PATH"},
		{[]string{"cat", "@1"}, "cat needs PATH"},
		{[]string{"forget"}, "forget needs SNAP"},
		{[]string{"log"}, "log needs PATH"},
		{[]string{"root"}, "root needs PATH"},
		{[]string{"gc", "x"}, `gc takes no arguments; unexpected argument "x"`},
		{[]string{"list", "a", "b"}, `list takes [DIR]; unexpected argument "b"`},
	} {
		r := e.run(c.args...)
		failsWith(t, r, 2, c.want)
		if strings.Contains(r.err, "arg(s)") {
			t.Errorf("%q: cobra's message %q", c.args, r.err)
		}
	}
	for _, c := range []struct {
		args []string
		exit float64
	}{
		{[]string{"cat", "--json"}, 2},
		{[]string{"list", "--json", "a", "b"}, 2},
		{[]string{"list", "--bogus", "--json"}, 2},
		{[]string{"cat", t.TempDir(), "@1", "f", "--json"}, 1},
	} {
		r := e.run(c.args...)
		doc := jsonOf[map[string]any](t, r.out)
		if float64(r.code) != c.exit || doc["exit"] != c.exit || doc["error"] != strings.TrimSuffix(strings.TrimPrefix(r.err, "casckpt: "), "\n") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", c.args, r.code, r.out, r.err)
		}
	}
}

// TestExportGzipAndLsPath: export -o NAME.tar.gz writes a gzip compressed
// archive (and refuses a name asking for a format it does not write); ls
// SNAP PATH lists what is below PATH only.
func TestExportGzipAndLsPath(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a", "src/b.txt": "b", "src/c/d.txt": "d"})
	e.ok("snapshot", dir)
	out := t.TempDir()
	for _, name := range []string{"x.tar.gz", "x.tgz"} {
		e.ok("export", dir, "@1", "-o", filepath.Join(out, name))
		f, err := os.Open(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s is not gzip: %v", name, err)
		}
		tr := tar.NewReader(zr)
		var names []string
		for {
			h, err := tr.Next()
			if err != nil {
				break
			}
			names = append(names, h.Name)
		}
		f.Close()
		if !slices.Contains(names, "src/c/d.txt") {
			t.Fatalf("%s holds %q", name, names)
		}
	}
	for _, name := range []string{"x.tar.zst", "x.tar.xz", "x.zip", "x.tar.bz2"} {
		failsWith(t, e.run("export", dir, "@1", "-o", filepath.Join(out, name)), 2, "asks for another format")
		if _, err := os.Stat(filepath.Join(out, name)); err == nil {
			t.Fatalf("%s was written", name)
		}
	}
	paths := func(args ...string) string {
		var ps []string
		for _, it := range jsonOf[[]map[string]any](t, e.ok(append(args, "--json")...).out) {
			ps = append(ps, it["path"].(string))
		}
		return strings.Join(ps, " ")
	}
	if got := paths("ls", dir, "@1", "src"); got != "src/b.txt src/c src/c/d.txt" {
		t.Fatalf("ls @1 src: %q", got)
	}
	if got := paths("ls", dir, "@1", "src/c/d.txt"); got != "src/c/d.txt" {
		t.Fatalf("ls @1 src/c/d.txt: %q", got)
	}
	t.Chdir(dir)
	if got := paths("ls", "@1", "src/c"); got != "src/c/d.txt" {
		t.Fatalf("ls @1 src/c (SNAP PATH): %q", got)
	}
	failsWith(t, e.run("ls", dir, "@1", "nope"), 1, "not found")
}

// TestS3NumbersSurviveACacheRebuild: a bucket store's cache, deleted and
// rebuilt from the bucket, gives each snapshot the #N its writer gave it,
// though a dropped snapshot left a gap.
func TestS3NumbersSurviveACacheRebuild(t *testing.T) {
	b := newBinEnv(t)
	s3Env(t, b, s3test.Start(t))
	dir := t.TempDir()
	for _, v := range []string{"1", "2", "3"} {
		writeFiles(t, dir, map[string]string{"f": v})
		b.ok("snapshot", dir)
	}
	b.ok("forget", dir, "#2")
	numbers := func() string {
		var out []string
		for _, it := range jsonOf[[]map[string]any](t, b.ok("list", dir, "--json").out) {
			out = append(out, fmt.Sprint(it["number"]))
		}
		return strings.Join(out, " ")
	}
	if got := numbers(); got != "3 1" {
		t.Fatalf("numbers %q, want 3 1", got)
	}
	if err := os.RemoveAll(filepath.Join(b.home, "cache")); err != nil {
		t.Fatal(err)
	}
	if got := numbers(); got != "3 1" {
		t.Fatalf("numbers on a rebuilt cache %q, want 3 1", got)
	}
	writeFiles(t, dir, map[string]string{"f": "4"})
	b.ok("snapshot", dir)
	if got := numbers(); got != "4 3 1" {
		t.Fatalf("numbers after a new snapshot %q, want 4 3 1", got)
	}
	if out := b.ok("cat", dir, "#3", "f").out; out != "3" {
		t.Fatalf("cat #3 on the rebuilt cache: %q", out)
	}
}

// TestNumbersSurviveRepair: a lost index rebuilt by repair from the
// packs gives each snapshot the #N it had, and the next snapshot the next.
func TestNumbersSurviveRepair(t *testing.T) {
	e := newEnv(t).filePacks() // it loses or damages pack files, or the database
	dir := t.TempDir()
	for _, v := range []string{"1", "2", "3"} {
		writeFiles(t, dir, map[string]string{"f": v})
		e.ok("snapshot", dir)
	}
	numbers := func() map[string]float64 {
		out := map[string]float64{}
		for _, it := range jsonOf[[]map[string]any](t, e.ok("list", dir, "--json").out) {
			out[it["id"].(string)] = it["number"].(float64)
		}
		return out
	}
	before := numbers()
	if len(before) != 3 {
		t.Fatalf("numbers %v", before)
	}
	if err := os.Remove(filepath.Join(e.store, "casckpt.db")); err != nil {
		t.Fatal(err)
	}
	e.ok("repair")
	if after := numbers(); !maps.Equal(after, before) {
		t.Fatalf("numbers after repair %v, want %v", after, before)
	}
	writeFiles(t, dir, map[string]string{"f": "4"})
	id := jsonOf[map[string]any](t, e.ok("snapshot", dir, "--json").out)["id"].(string)
	if got := numbers()[id]; got != 4 {
		t.Fatalf("the snapshot after repair is #%v, want #4", got)
	}
}
