package main

import "testing"

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
