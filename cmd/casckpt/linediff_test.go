package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitIn runs git in dir with no configuration but its defaults and
// returns what it printed; it fails the test when git fails.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t",
		"GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "COLUMNS=80")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// withoutIndexLines drops git's "index <hash>..<hash>" lines, which name
// git's own objects, from a patch.
func withoutIndexLines(patch string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(patch, "\n") {
		if !strings.HasPrefix(l, "index ") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// TestLineDiffLikeGit: three edited lines of a real source file (this
// repository's restore.go) count as 3 insertions and 3 deletions in diff
// --json, --stat, list, log and turns, and diff prints git's patch, hunk
// for hunk (they once counted +211 -211 in one hunk, from a diff of
// characters widened to lines).
func TestLineDiffLikeGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is needed to compare with")
	}
	src, err := os.ReadFile("../../restore.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(src), "\n")
	if len(lines) < 250 {
		t.Fatalf("restore.go has only %d lines", len(lines))
	}
	b := newBinEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"restore.go": string(src)})
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "before")
	b.ok("snapshot", dir, "--session", "s", "--turn", "t1")
	for _, at := range []int{40, 120, 121} {
		lines[at] = strings.TrimSuffix(lines[at], "\n") + " // edited\n"
	}
	writeFiles(t, dir, map[string]string{"restore.go": strings.Join(lines, "")})
	gitIn(t, dir, "add", "-A")

	want := withoutIndexLines(gitIn(t, dir, "diff", "--cached", "HEAD"))
	if got := b.ok("diff", dir, "@1").out; got != want {
		t.Errorf("casckpt diff:\n%s\ngit diff:\n%s", got, want)
	}
	if got, want := b.ok("diff", dir, "@1", "--stat").out, gitIn(t, dir, "diff", "--cached", "--stat", "HEAD"); got != want {
		t.Errorf("casckpt diff --stat:\n%s\ngit diff --stat:\n%s", got, want)
	}
	counts := func(what string, m map[string]any) {
		t.Helper()
		if m["insertions"] != 3.0 || m["deletions"] != 3.0 {
			t.Errorf("%s: +%v -%v, want +3 -3", what, m["insertions"], m["deletions"])
		}
	}
	doc := jsonOf[map[string]any](t, b.ok("diff", dir, "@1", "--json").out)
	counts("diff --json", doc)
	counts("diff --json file", doc["files"].([]any)[0].(map[string]any))

	b.ok("snapshot", dir, "--session", "s", "--turn", "t1", "--end-turn")
	counts("list --json", jsonOf[[]map[string]any](t, b.ok("list", dir, "--json").out)[0])
	counts("log --json", jsonOf[[]map[string]any](t, b.ok("log", dir, "restore.go", "--json").out)[0])
	counts("turns --json", jsonOf[[]map[string]any](t, b.ok("turns", dir, "--json").out)[0])
}

// TestDiffHeadersQuoteNames: a file name with a newline, a tab, a quote
// or a backslash is quoted in diff's headers as git quotes it ("a/x\ny"),
// so it cannot forge a line of the patch; a name with a space gets git's
// tab after the "---" and "+++" names. The patch is git's, byte for byte.
func TestDiffHeadersQuoteNames(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is needed to compare with")
	}
	b := newBinEnv(t)
	dir := t.TempDir()
	names := []string{"x\n+++ b/forged\n@@ -1 +1 @@\n+owned", "tab\there", `quo"te`, `back\slash`, "with space", "plain"}
	before := map[string]string{}
	for _, n := range names {
		before[n] = "old\n"
	}
	writeFiles(t, dir, before)
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "before")
	b.ok("snapshot", dir)
	after := map[string]string{}
	for _, n := range names {
		after[n] = "new\n"
	}
	writeFiles(t, dir, after)
	os.Remove(filepath.Join(dir, "plain"))
	writeFiles(t, dir, map[string]string{"new\nfile": "added\n"})
	gitIn(t, dir, "add", "-A")

	want := withoutIndexLines(gitIn(t, dir, "-c", "core.quotepath=false", "diff", "--cached", "--no-renames", "HEAD"))
	got := b.ok("diff", dir, "@1").out
	if got != want {
		t.Errorf("casckpt diff:\n%s\ngit diff:\n%s", got, want)
	}
	if strings.Contains(got, "\n+++ b/forged") {
		t.Errorf("a file name forged a patch line:\n%s", got)
	}
	if !bytes.Contains([]byte(got), []byte("--- \"a/x\\n+++ b/forged\\n@@ -1 +1 @@\\n+owned\"\t\n")) {
		t.Errorf("the name with newlines is not quoted:\n%s", got)
	}
}
