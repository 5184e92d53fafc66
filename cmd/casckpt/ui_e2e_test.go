package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// chromiumPath is the browser the page's end-to-end test drives
// (Debian's chromium package, which .ci/test installs).
const chromiumPath = "/usr/bin/chromium"

// TestUIBrowserEndToEnd drives casckpt ui's page in headless chromium
// with playwright-core (testdata/ui-e2e/ui.mjs): a project of three turns
// made through the command shows them newest first with their counts; the
// second turn's diff (its .go file coloured by highlight.js), its undo's preview, the undo on disk and the
// pre-undo snapshot on the page; a safe restore that keeps a file edited
// by hand and lists it; a snapshot taken by the command that appears
// without a reload; a forget previewed by its dry run, then confirmed,
// that takes the snapshot off the timeline; no request leaves the server;
// a dark theme when the system prefers one. With
// CASCKPT_UI_SCREENSHOTS=DIR it writes the README's screenshots there.
func TestUIBrowserEndToEnd(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		skipUnlessCI(t, "node is not on PATH: install Node 20 to run the page's browser test")
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		skipUnlessCI(t, "chromium is not installed: apt-get install chromium to run the page's browser test")
	}
	e2e, err := filepath.Abs(filepath.Join("testdata", "ui-e2e"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e2e, "node_modules", "playwright-core")); err != nil {
		skipUnlessCI(t, "playwright-core is not installed: run npm ci in cmd/casckpt/testdata/ui-e2e")
	}
	b := newBinEnv(t)
	dir := filepath.Join(b.home, "my-app") // the page shows it as ~/my-app, no temporary path
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"a.txt": "one\n"})
	b.ok("snapshot", dir, "-m", "initial")
	for _, turn := range []struct {
		name  string
		files map[string]string
	}{
		{"t1", map[string]string{"b.txt": "b\n"}},
		{"t2", map[string]string{"a.txt": "one\ntwo\n", "c.go": "package c\n"}},
		{"t3", map[string]string{"d.txt": "d\n"}},
	} {
		b.ok("snapshot", dir, "--session", "s1", "--turn", turn.name)
		writeFiles(t, dir, turn.files)
		b.ok("snapshot", dir, "--session", "s1", "--turn", turn.name, "--end-turn")
	}
	s := b.startUI(dir)
	shots := os.Getenv("CASCKPT_UI_SCREENSHOTS")
	if shots != "" {
		if shots, err = filepath.Abs(filepath.Join("..", "..", shots)); err != nil {
			t.Fatal(err)
		}
	}
	// chromium's singleton socket goes under TMPDIR, and a socket's path
	// must fit in 108 bytes: a test's own temporary directory is too deep.
	short, err := os.MkdirTemp("/tmp", "ui")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(short) })
	c := exec.Command(node, filepath.Join(e2e, "ui.mjs"))
	c.Dir = e2e
	c.Env = append(b.command().Env, "PATH="+filepath.Dir(node)+":/usr/bin:/bin", "TMPDIR="+short,
		"UI_URL="+s.URL, "UI_DIR="+dir, "CASCKPT_BIN="+b.bin, "CHROMIUM="+chromiumPath, "SHOTS="+shots)
	out, err := c.CombinedOutput()
	t.Logf("%s", out)
	if err != nil || strings.Contains(string(out), "FAILED") {
		t.Fatalf("the browser test failed: %v", err)
	}
}

// skipUnlessCI skips t for want of what .ci/test installs, or fails it
// under CI=true, where that is installed.
func skipUnlessCI(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
}
