package main

import (
	"strings"
	"testing"
)

func TestUseColour(t *testing.T) {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	for _, c := range []struct {
		mode     string
		vars     map[string]string
		terminal bool
		want     bool
	}{
		{"auto", nil, true, true},
		{"auto", nil, false, false},
		{"auto", map[string]string{"NO_COLOR": "1"}, true, false},
		{"auto", map[string]string{"TERM": "dumb"}, true, false},
		{"always", map[string]string{"NO_COLOR": "1"}, false, true}, // the command line wins over NO_COLOR
		{"never", nil, true, false},
	} {
		if got := useColour(c.mode, env(c.vars), c.terminal); got != c.want {
			t.Errorf("useColour(%s, %v, terminal %v) = %v", c.mode, c.vars, c.terminal, got)
		}
	}
}

func TestPagerCommand(t *testing.T) {
	for _, c := range []struct {
		vars map[string]string
		want string
	}{
		{nil, "less -FRX"},
		{map[string]string{"PAGER": "more"}, "more"},
		{map[string]string{"PAGER": "more", "CASCKPT_PAGER": "most -s"}, "most -s"},
		{map[string]string{"PAGER": "more", "CASCKPT_PAGER": "cat"}, ""},
		{map[string]string{"PAGER": "cat"}, ""},
	} {
		if got := pagerCommand(func(k string) string { return c.vars[k] }); got != c.want {
			t.Errorf("pagerCommand(%v) = %q, want %q", c.vars, got, c.want)
		}
	}
}

// TestDiffColour: diff --color=always colours the patch as git does;
// without it, off a terminal, or with --color=never, no escape is written;
// a bad --color is a usage error.
func TestDiffColour(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": "old\n"})
	e.ok("snapshot", dir)
	writeFiles(t, dir, map[string]string{"f.txt": "new\n"})
	coloured := e.ok("diff", dir, "@1", "--color=always").out
	for _, want := range []string{ansiRed + "-old" + ansiReset + "\n", ansiGreen + "+new" + ansiReset + "\n", ansiCyan + "@@"} {
		if !strings.Contains(coloured, want) {
			t.Errorf("diff --color=always lacks %q:\n%q", want, coloured)
		}
	}
	for _, args := range [][]string{{"diff", dir, "@1"}, {"diff", dir, "@1", "--color=never"}, {"diff", dir, "@1", "--color=always", "--json"}} {
		if out := e.ok(args...).out; strings.Contains(out, "\033[") {
			t.Errorf("%q wrote escapes: %q", args, out)
		}
	}
	failsWith(t, e.run("diff", dir, "@1", "--color=sometimes"), 2, "--color takes auto, always or never")
}
