package main

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestExtraArgumentsRefused runs every command with one argument more than
// it uses: each refuses it (exit 2, one line) and changes nothing.
func TestExtraArgumentsRefused(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f": "1"})
	e.ok("snapshot", dir)
	writeFiles(t, dir, map[string]string{"f": "2"})
	e.ok("snapshot", dir)
	t.Chdir(dir) // the commands' DIR defaults to the current directory
	tar := filepath.Join(t.TempDir(), "x.tar")
	for _, args := range [][]string{
		{"pin", "@1", "@2"},
		{"pin", dir, "@1", "@2"},
		{"unpin", "@1", "@2"},
		{"ls", "@1", "f", "extra"},
		{"ls", dir, "@1", "f", "extra"},
		{"cat", "@1", "f", "extra"},
		{"cat", dir, "@1", "f", "extra"},
		{"export", "@1", "extra", "-o", tar},
		{"export", dir, "@1", "extra", "-o", tar},
		{"diff", "@1", "@2", "@1"},
		{"diff", dir, "@1", "@2", "extra"},
		{"list", dir, "extra"},
		{"snapshot", dir, "extra"},
		{"status", "extra"},
		{"gc", "extra"},
		{"verify", "extra"},
		{"repair", "extra"},
		{"prune", "extra"},
		{"clear", "extra", "--yes"},
		{"migrate", "extra"},
		{"clear-legacy", "extra", "--yes"},
		{"root", dir, "extra"},
		{"version", "extra"},
	} {
		r := e.run(args...)
		failsWith(t, r, 2, "")
		if r.out != "" {
			t.Errorf("%q printed %q", args, r.out)
		}
	}
	list := jsonOf[[]map[string]any](t, e.ok("list", dir, "--json").out)
	if len(list) != 2 || list[0]["pinned"] != false || list[1]["pinned"] != false {
		t.Fatalf("a refused command changed the snapshots: %v", list)
	}
	if _, err := os.Stat(tar); !os.IsNotExist(err) {
		t.Fatal("a refused export wrote its archive")
	}
	// forget uses every argument: a bad one is a bad reference (exit 1).
	failsWith(t, e.run("forget", "@1", "nope"), 1, "nope")
}

// TestTimesAndSizesInRange refuses a clock and flag values that casckpt
// cannot record or that overflow when converted to bytes or a duration.
func TestTimesAndSizesInRange(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f": "1"})
	for _, now := range []string{"9999-12-31T23:59:59Z", "2262-04-12T00:00:00Z", "1600-01-01T00:00:00Z"} {
		e.vars["CASCKPT_NOW"] = now
		failsWith(t, e.run("snapshot", dir), 2, "from 1677-09-21T00:12:44Z to 2262-04-11T23:47:16Z")
	}
	if _, err := os.Stat(e.store); !os.IsNotExist(err) {
		t.Fatal("a refused clock wrote to the store")
	}
	e.vars["CASCKPT_NOW"] = "2262-04-11T00:00:00Z"
	e.ok("snapshot", dir)
	delete(e.vars, "CASCKPT_NOW")
	writeFiles(t, dir, map[string]string{"f": "2"})
	for _, args := range [][]string{
		{"snapshot", dir, "--max-size-mb", "17592186044417"},
		{"snapshot", dir, "--max-size-mb", "8796093022208"},
		{"snapshot", dir, "--max-file-size-mb", "17592186044417"},
		{"snapshot", dir, "--keep", "99999999999999999999"},
		{"snapshot", dir, "--max-files", "99999999999999999999"},
		{"list", dir, "-n", "99999999999999999999"},
		{"prune", "--max-size-mb", "17592186044417"},
		{"prune", "--retention-days", "106752"},
		{"prune", "--min-interval-hours", "NaN"},
		{"prune", "--min-interval-hours", "+Inf"},
		{"prune", "--min-interval-hours", "1e30"},
	} {
		failsWith(t, e.run(args...), 2, "")
	}
	list := jsonOf[[]map[string]any](t, e.ok("list", dir, "--json").out)
	if len(list) != 1 || list[0]["time"] != "2262-04-11T00:00:00Z" {
		t.Fatalf("refused commands changed the snapshots: %v", list)
	}
	e.ok("snapshot", dir, "--max-size-mb", "8796093022207") // the largest cap
}

// TestVersion prints the build's version, commit and Go release.
func TestVersion(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{{"version", "--json"}, {"--version", "--json"}} {
		v := jsonOf[map[string]string](t, e.ok(args...).out)
		if len(v) != 3 || v["version"] == "" || v["commit"] == "" || !strings.HasPrefix(v["go"], "go") {
			t.Fatalf("%q: %v", args, v)
		}
	}
	if out := e.ok("--version").out; !strings.HasPrefix(out, "casckpt ") || strings.Count(out, "\n") != 1 {
		t.Fatalf("--version: %q", out)
	}
	if out := e.ok("version").out; !strings.HasPrefix(out, "casckpt ") {
		t.Fatalf("version: %q", out)
	}
}

// TestInterruptedSnapshot sends SIGINT to the binary while it snapshots a
// big tree: it says so on one line and exits 130, and what it says was
// recorded is what the store holds.
func TestInterruptedSnapshot(t *testing.T) {
	dir := t.TempDir()
	made := 0
	for files := 5000; ; files *= 2 {
		if files > 200_000 {
			t.Fatal("every snapshot finished before the signal reached it")
		}
		for ; made < files; made++ {
			p := filepath.Join(dir, "d"+string(rune('a'+made%20)), "f"+strings.Repeat("x", made%7)+"-"+strconv.Itoa(made))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(strings.Repeat(strconv.Itoa(made), 50)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		bin := newBinEnv(t)
		store := bin.store()
		c := bin.command("snapshot", dir, "--max-files", "1000000")
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		// The store's lock file exists once the snapshot has begun, and the
		// signal handler was set up before that.
		var err error
	wait:
		for {
			select {
			case err = <-done:
				break wait
			default:
			}
			if _, serr := os.Stat(filepath.Join(store, "lock")); serr == nil {
				c.Process.Signal(os.Interrupt)
				err = <-done
				break
			}
			time.Sleep(time.Millisecond)
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			continue // it finished first: try a bigger tree
		}
		if ee.ExitCode() != 130 {
			t.Fatalf("exit %d (%v), stderr %q", ee.ExitCode(), err, errb.String())
		}
		e := &env{t: t, vars: map[string]string{"HOME": bin.home, "CASCKPT_HOME": store}, store: store}
		list := jsonOf[[]map[string]any](t, e.ok("list", dir, "--json").out)
		want := "casckpt: interrupted; nothing was recorded\n"
		if len(list) == 1 {
			want = "casckpt: interrupted; snapshot " + list[0]["short_id"].(string) + " was recorded\n"
		}
		if errb.String() != want || out.Len() != 0 {
			t.Fatalf("stderr %q (want %q), stdout %q", errb.String(), want, out.String())
		}
		return
	}
}

// TestDiffStatLikeGit compares diff --stat with git diff --stat on the
// same change, at several widths.
func TestDiffStatLikeGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is needed to compare with")
	}
	lines := func(n int, word string) string { return strings.Repeat(word+"\n", n) }
	long := "very/long/directory/name/that/goes/on/and/on/src/components/widgets/deeply/nested/file_with_a_long_name.txt"
	for _, c := range []struct {
		name          string
		before, after map[string]string
		chmod         string
	}{
		{"one file", map[string]string{"a.txt": lines(6, "x")}, map[string]string{"a.txt": "y\nx\n"}, ""},
		{"only insertions", map[string]string{"a.txt": "x\n"}, map[string]string{"a.txt": "x\ny\n", "new.txt": lines(3, "n")}, ""},
		{"mixed", map[string]string{
			"small.txt": lines(10, "s"), "five.txt": lines(5, "f") + "keep\n", "big.txt": lines(10, "b"),
			"bin.dat": "\x00\x01", "gone.txt": lines(2, "g"), long: "old\n", "exec.sh": "#!/bin/sh\n", "ünï.txt": "u\n",
		}, map[string]string{
			"small.txt": lines(10, "s") + "one more\n", "five.txt": "keep\n", "big.txt": lines(1000, "B"),
			"bin.dat": "\x00\x02\x03", "newbin.dat": "\x00\x00", long: "new\n", "empty.txt": "", "ünï.txt": "v\n",
		}, "exec.sh"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			dir := t.TempDir()
			writeFiles(t, dir, c.before)
			git := func(args ...string) string {
				t.Helper()
				cmd := exec.Command("git", args...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t",
					"GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "COLUMNS="+e.vars["COLUMNS"])
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("git %q: %v\n%s", args, err, out)
				}
				return string(out)
			}
			git("init", "-q")
			git("add", "-A")
			git("commit", "-q", "-m", "before")
			e.ok("snapshot", dir)
			for p := range c.before {
				if _, ok := c.after[p]; !ok && p != c.chmod {
					os.Remove(filepath.Join(dir, p))
				}
			}
			writeFiles(t, dir, c.after)
			if c.chmod != "" {
				os.Chmod(filepath.Join(dir, c.chmod), 0o755)
			}
			git("add", "-A")
			for _, cols := range []string{"80", "60", "40", "200", "10"} {
				e.vars["COLUMNS"] = cols
				want := git("-c", "core.quotepath=false", "diff", "--cached", "--stat", "--no-renames", "HEAD")
				if got := e.ok("diff", dir, "@1", "--stat").out; got != want {
					t.Errorf("COLUMNS=%s: casckpt diff --stat:\n%s\ngit diff --stat:\n%s", cols, got, want)
				}
			}
		})
	}
}

// TestPruneDryRunNamesDrops: prune --dry-run names every snapshot it would
// drop and the rule, in text and JSON, and changes nothing.
func TestPruneDryRunNamesDrops(t *testing.T) {
	e := newEnv(t)
	gone, stale, big := t.TempDir(), t.TempDir(), t.TempDir()
	writeFiles(t, gone, map[string]string{"f": "gone"})
	writeFiles(t, stale, map[string]string{"f": "stale"})
	e.vars["CASCKPT_NOW"] = "2026-01-01T00:00:00Z"
	ids := map[string]string{}
	snap := func(dir, name string) {
		ids[name] = jsonOf[map[string]any](t, e.ok("snapshot", dir, "--json").out)["id"].(string)
	}
	snap(gone, "gone")
	snap(stale, "stale")
	e.vars["CASCKPT_NOW"] = "2026-01-10T00:00:00Z" // stale was last touched 9 days ago
	random := func() string {
		b := make([]byte, 3<<20)
		f, _ := os.Open("/dev/urandom")
		defer f.Close()
		if _, err := f.Read(b); err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	writeFiles(t, big, map[string]string{"blob": random()})
	snap(big, "big1")
	writeFiles(t, big, map[string]string{"blob": random()})
	snap(big, "big2")
	os.RemoveAll(gone)

	args := []string{"prune", "--dry-run", "--max-size-mb", "5"}
	doc := jsonOf[map[string]any](t, e.ok(append(args, "--json")...).out)
	got := map[string]string{}
	for _, d := range doc["drops"].([]any) {
		m := d.(map[string]any)
		if want := []string{"id", "project", "rule"}; !slices.Equal(keys(m), want) {
			t.Fatalf("drop keys %v", keys(m))
		}
		got[m["id"].(string)] = m["rule"].(string) + " " + m["project"].(string)
	}
	real := func(p string) string { r, _ := filepath.EvalSymlinks(p); return r }
	want := map[string]string{
		ids["gone"]:  "orphan " + gone,
		ids["stale"]: "stale " + real(stale),
		ids["big1"]:  "size-cap " + real(big),
	}
	if !maps.Equal(got, want) || doc["snapshots_dropped"] != 3.0 || doc["deleted_orphan"] != 1.0 || doc["deleted_stale"] != 1.0 {
		t.Fatalf("dry-run drops %v, want %v (%v)", got, want, doc)
	}
	text := e.ok(args...).out
	for id, rule := range want {
		line := "would drop " + id[:12] + " of " + strings.SplitN(rule, " ", 2)[1] + " (" + strings.SplitN(rule, " ", 2)[0] + ":"
		if !strings.Contains(text, line) {
			t.Errorf("text lacks %q:\n%s", line, text)
		}
	}
	if strings.Contains(text, "freed") {
		t.Errorf("a dry run says it freed space:\n%s", text)
	}
	st := jsonOf[map[string]any](t, e.ok("status", "--json").out)
	if n := len(st["projects"].([]any)); n != 3 {
		t.Fatalf("the dry run dropped projects: %d left", n)
	}
}

// TestNumbersAndPlurals: human outputs say "1 file" and "2 files" and put
// thousands separators in every count.
func TestNumbersAndPlurals(t *testing.T) {
	e := newEnv(t)
	one, many := t.TempDir(), t.TempDir()
	writeFiles(t, one, map[string]string{"f": "x\n"})
	files := map[string]string{}
	for i := range 1234 {
		files["d/f"+strconv.Itoa(i)] = "x\n"
	}
	writeFiles(t, many, files)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"snapshot", one}, ": 1 file, 2 B\n"},
		{[]string{"list", one}, " 1 file +1 -0 "},
		{[]string{"status"}, ", 1 project\n"},
		{[]string{"verify"}, "checked 1 snapshot, "},
		{[]string{"prune"}, "scanned 1 project; dropped 0 snapshots (0 orphan projects and 0 stale projects)"},
		{[]string{"snapshot", many}, ": 1,234 files, 2.4 KiB\n"},
		{[]string{"list", many}, " 1,234 files +1,234 -0 "},
		{[]string{"status"}, ", 2 projects\n"},
		{[]string{"verify"}, "checked 2 snapshots, "},
	} {
		if out := e.ok(c.args...).out; !strings.Contains(out, c.want) {
			t.Errorf("%q printed %q, want %q in it", c.args, out, c.want)
		}
	}
}

// TestListInSubdirectoryNamesProject: list in a subdirectory of a project
// lists the project's snapshots, as git finds a repository; with --here it
// says which project holds the snapshots (JSON stays []).
func TestListInSubdirectoryNamesProject(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	real, _ := filepath.EvalSymlinks(dir)
	for _, v := range []string{"1", "2", "3"} {
		writeFiles(t, dir, map[string]string{"sub/f": v})
		e.ok("snapshot", dir)
	}
	sub := filepath.Join(dir, "sub")
	want := "no snapshots of " + filepath.Join(real, "sub") + "; " + real + " holds 3 snapshots: casckpt list " + real + "\n"
	if out := e.ok("list", sub, "--here").out; out != want {
		t.Fatalf("list --here in a subdirectory: %q, want %q", out, want)
	}
	if out := e.ok("list", sub, "--here", "--json").out; strings.TrimSpace(out) != "[]" {
		t.Fatalf("list --here --json in a subdirectory: %q", out)
	}
	if list := jsonOf[[]map[string]any](t, e.ok("list", sub, "--json").out); len(list) != 3 {
		t.Fatalf("list in a subdirectory lists %d snapshots, want the project's 3", len(list))
	}
	other := t.TempDir()
	realOther, _ := filepath.EvalSymlinks(other)
	if out := e.ok("list", other).out; out != "no snapshots of "+realOther+"\n" {
		t.Fatalf("list of a directory outside any project: %q", out)
	}
}
