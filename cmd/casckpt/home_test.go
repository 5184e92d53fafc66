package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHomeDir: HOME is the home everywhere; on Windows, where HOME is
// seldom set, %USERPROFILE% stands in for it, and nowhere else.
func TestHomeDir(t *testing.T) {
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	for _, c := range []struct {
		vars       map[string]string
		goos, want string
	}{
		{map[string]string{"HOME": "/home/u", "USERPROFILE": `C:\Users\u`}, "linux", "/home/u"},
		{map[string]string{"USERPROFILE": `C:\Users\u`}, "linux", ""},
		{map[string]string{"USERPROFILE": `C:\Users\u`}, "darwin", ""},
		{map[string]string{"USERPROFILE": `C:\Users\u`}, "windows", `C:\Users\u`},
		{map[string]string{"HOME": `C:\home`, "USERPROFILE": `C:\Users\u`}, "windows", `C:\home`},
	} {
		if got := homeDir(env(c.vars), c.goos); got != c.want {
			t.Errorf("homeDir(%v, %s) = %q, want %q", c.vars, c.goos, got, c.want)
		}
	}
}

// TestResolvedHome: status' home is the home directory with its symbolic
// links resolved, as a project's workdir is, and null when unknown.
func TestResolvedHome(t *testing.T) {
	real, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "home")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if got := resolvedHome(link); got == nil || string(*got) != real {
		t.Fatalf("resolvedHome(%s) = %v, want %s", link, got, real)
	}
	for _, unknown := range []string{"", "relative/home"} {
		if got := resolvedHome(unknown); got != nil {
			t.Errorf("resolvedHome(%q) = %s, want nil", unknown, *got)
		}
	}
}
