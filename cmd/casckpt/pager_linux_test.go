package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// onTerminal runs the built casckpt with args, its stdout on a terminal,
// and returns what it drew there.
func onTerminal(t *testing.T, b *binEnv, args ...string) string {
	t.Helper()
	_, drawn := runOnTerminal(t, b, true, args...)
	return strings.ReplaceAll(drawn, "\r\n", "\n")
}

// TestDiffOnTerminalIsColouredAndPaged: on a terminal, diff goes through
// $CASCKPT_PAGER, coloured; NO_COLOR turns the colour off, CASCKPT_PAGER=cat
// the pager.
func TestDiffOnTerminalIsColouredAndPaged(t *testing.T) {
	b := newBinEnv(t)
	dir := filepath.Join(b.home, "proj")
	writeFiles(t, dir, map[string]string{"f.txt": "old\n"})
	b.ok("snapshot", dir)
	writeFiles(t, dir, map[string]string{"f.txt": "new\n"})
	b.extra = []string{"PATH=/usr/bin:/bin", "CASCKPT_PAGER=sed s/^/PAGED:/"}
	out := onTerminal(t, b, "diff", dir, "@1")
	if !strings.Contains(out, "PAGED:"+ansiGreen+"+new"+ansiReset+"\n") {
		t.Fatalf("diff on a terminal was not paged and coloured:\n%q", out)
	}
	b.extra = append(b.extra, "NO_COLOR=1")
	if out := onTerminal(t, b, "diff", dir, "@1"); !strings.Contains(out, "PAGED:+new\n") || strings.Contains(out, "\033[") {
		t.Fatalf("diff with NO_COLOR:\n%q", out)
	}
	b.extra = append(b.extra, "CASCKPT_PAGER=cat")
	if out := onTerminal(t, b, "diff", dir, "@1"); strings.Contains(out, "PAGED:") || !strings.Contains(out, "+new\n") {
		t.Fatalf("diff with CASCKPT_PAGER=cat:\n%q", out)
	}
}
