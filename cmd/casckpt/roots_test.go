package main

import (
	"os"
	"path/filepath"
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
