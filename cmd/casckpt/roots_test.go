package main

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runEnv runs casckpt with args and extra environment variables (later
// ones replace b's own).
func (b *binEnv) runEnv(env []string, args ...string) result {
	b.t.Helper()
	c := b.command(args...)
	c.Env = append(c.Env, env...)
	return b.runCmd(c)
}

// okEnv is runEnv for a command that must succeed.
func (b *binEnv) okEnv(env []string, args ...string) result {
	b.t.Helper()
	r := b.runEnv(env, args...)
	if r.code != 0 {
		b.t.Fatalf("casckpt %q: exit %d, stderr %q", args, r.code, r.err)
	}
	return r
}

// states returns each project's state as status --json reports it.
func (b *binEnv) states(env []string) map[string]string {
	b.t.Helper()
	st := jsonOf[map[string]any](b.t, b.okEnv(env, "status", "--json").out)
	out := map[string]string{}
	for _, p := range st["projects"].([]any) {
		m := p.(map[string]any)
		out[m["workdir"].(string)] = m["state"].(string)
	}
	return out
}

// TestOrphanOnlyWhenDeletionObservable: a project directory deleted from
// a parent that is still there is an orphan and prune drops it; one whose
// parent was replaced or is gone (an unmounted volume) is unreachable and
// survives prune until the stale rule takes it.
func TestOrphanOnlyWhenDeletionObservable(t *testing.T) {
	b := newBinEnv(t)
	base, _ := filepath.EvalSymlinks(t.TempDir())
	dirs := map[string]string{}
	for _, name := range []string{"orphan", "replaced", "volume", "live"} {
		dirs[name] = filepath.Join(base, name+"-parent", "proj")
		writeFiles(t, dirs[name], map[string]string{"f.txt": name + "\n", "big.bin": randomData(t, 200_000)})
	}
	t0 := []string{"CASCKPT_NOW=2026-01-01T00:00:00Z"}
	for _, d := range dirs {
		b.okEnv(t0, "snapshot", d)
	}

	// orphan: its directory is deleted, its parent stays.
	if err := os.RemoveAll(dirs["orphan"]); err != nil {
		t.Fatal(err)
	}
	// replaced: the parent is renamed away and a new one made in its place.
	replacedParent := filepath.Dir(dirs["replaced"])
	if err := os.Rename(replacedParent, replacedParent+"-old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(replacedParent, 0o755); err != nil {
		t.Fatal(err)
	}
	// volume: the parent is gone too, as under an unmounted volume.
	if err := os.RemoveAll(filepath.Dir(dirs["volume"])); err != nil {
		t.Fatal(err)
	}

	hourLater := []string{"CASCKPT_NOW=2026-01-01T01:00:00Z"}
	want := map[string]string{dirs["orphan"]: "orphan", dirs["replaced"]: "unreachable", dirs["volume"]: "unreachable", dirs["live"]: "live"}
	if got := b.states(hourLater); !maps.Equal(got, want) {
		t.Fatalf("status states %v, want %v", got, want)
	}
	text := b.okEnv(hourLater, "status").out
	seen := 0
	for _, line := range strings.Split(text, "\n") {
		for d, state := range want {
			if strings.HasPrefix(line, d+" ") {
				seen++
				if !strings.HasSuffix(line, " "+state) {
					t.Errorf("status line of %s does not end in %q: %q", d, state, line)
				}
			}
		}
	}
	if seen != len(want) {
		t.Fatalf("status names %d of the %d projects:\n%s", seen, len(want), text)
	}

	pr := jsonOf[map[string]any](t, b.okEnv(hourLater, "prune", "--json").out)
	if pr["deleted_orphan"] != 1.0 || pr["deleted_stale"] != 0.0 || pr["snapshots_dropped"] != 1.0 || pr["bytes_freed"].(float64) < 200_000 {
		t.Fatalf("prune: %v", pr)
	}
	delete(want, dirs["orphan"])
	if got := b.states(hourLater); !maps.Equal(got, want) {
		t.Fatalf("after prune: states %v, want %v", got, want)
	}
	for _, name := range []string{"replaced", "volume"} {
		if r := b.okEnv(hourLater, "cat", dirs[name], "@1", "f.txt"); r.out != name+"\n" {
			t.Fatalf("the %s project's snapshot reads %q", name, r.out)
		}
	}

	// Eight days on, the live project is snapshotted again; the stale rule
	// then drops the two unreachable ones.
	later := []string{"CASCKPT_NOW=2026-01-09T00:00:00Z"}
	b.okEnv(later, "snapshot", dirs["live"])
	pr = jsonOf[map[string]any](t, b.okEnv(later, "prune", "--retention-days", "7", "--json").out)
	if pr["deleted_orphan"] != 0.0 || pr["deleted_stale"] != 2.0 || pr["snapshots_dropped"] != 2.0 {
		t.Fatalf("stale prune: %v", pr)
	}
	if got := b.states(later); !maps.Equal(got, map[string]string{dirs["live"]: "live"}) {
		t.Fatalf("after the stale prune: %v", got)
	}
}

// TestRootPrefersKnownProjectsAndStaysBelowHome: root returns the nearest
// known project or marker directory, never the home directory (whose
// marker does not count) nor anything above it.
func TestRootPrefersKnownProjectsAndStaysBelowHome(t *testing.T) {
	b := newBinEnv(t)
	outer, _ := filepath.EvalSymlinks(t.TempDir())
	home := filepath.Join(outer, "home")
	writeFiles(t, outer, map[string]string{
		".git/HEAD":                    "ref: refs/heads/main\n", // above home: never reached
		"home/.git/HEAD":               "ref: refs/heads/main\n", // home's own: does not count
		"home/known/deep/er/file.txt":  "x\n",
		"home/known/sub/go.mod":        "module sub\n",
		"home/known/sub/pkg/a.go":      "package pkg\n",
		"home/marked/package.json":     "{}\n",
		"home/marked/inner/src/z.txt":  "z\n",
		"home/marked/inner/readme.txt": "r\n",
		"home/plain/a/b/file.txt":      "p\n",
		"home/notes.txt":               "n\n",
	})
	if err := os.Symlink(filepath.Join(home, "known"), filepath.Join(home, "link")); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home}
	b.okEnv(env, "snapshot", filepath.Join(home, "known"))
	b.okEnv(env, "snapshot", filepath.Join(home, "marked", "inner"))
	for _, c := range []struct{ path, want string }{
		{"known/deep/er/file.txt", "known"},        // a known project, no marker
		{"link/deep/er/file.txt", "known"},         // through a link: resolved
		{"known/deep/er/new/not-yet.txt", "known"}, // a path that does not exist yet
		{"known/sub/pkg/a.go", "known/sub"},        // a nearer marker wins
		{"marked/inner/src/z.txt", "marked/inner"}, // a nearer known project wins
		{"marked/package.json", "marked"},          // a marker below home works
		{"plain/a/b/file.txt", "plain/a/b"},        // neither: its own directory, not home
		{"plain/a", "plain/a"},                     // a directory is its own
		{"notes.txt", ""},                          // a file in home: its own directory, home
	} {
		want := filepath.Join(home, c.want)
		if r := b.okEnv(env, "root", filepath.Join(home, c.path)); r.out != want+"\n" {
			t.Errorf("root %s = %q, want %q", c.path, r.out, want)
		}
		doc := jsonOf[map[string]string](t, b.okEnv(env, "root", filepath.Join(home, c.path), "--json").out)
		if doc["root"] != want || len(doc) != 1 {
			t.Errorf("root %s --json = %v", c.path, doc)
		}
	}
	// With HOME elsewhere, home/.git is a marker like any other.
	if r := b.okEnv([]string{"HOME=" + filepath.Join(outer, "elsewhere")}, "root", filepath.Join(home, "plain", "a", "b", "file.txt")); r.out != home+"\n" {
		t.Fatalf("root below a home elsewhere = %q, want the marker directory %s", r.out, home)
	}
}
