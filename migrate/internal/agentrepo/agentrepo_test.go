package agentrepo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/casckpt/casckpt/migrate/gitimport"
	"github.com/casckpt/casckpt/migrate/gitimport/gittest"
)

// A ui_messages.json that is malformed, not an array, or larger than the
// limit maps nothing: its checkpoints take their commit's time as turn.
func TestReadTurnsIgnoresHostileFiles(t *testing.T) {
	c := gitimport.CommitInfo{Hash: strings.Repeat("ab", 20), Time: time.UnixMilli(1_700_000_000_123)}
	hash := func(m Message) string { return m.LastCheckpointHash }
	for name, data := range map[string]string{
		"malformed": `[{"ts": 1, "lastCheckpointHash": "` + c.Hash,
		"object":    `{"ts": 1, "lastCheckpointHash": "` + c.Hash + `"}`,
		"oversized": `[{"ts": 1, "lastCheckpointHash": "` + c.Hash + `"}]` + strings.Repeat(" ", maxMessages),
		"short":     `[{"ts": 1, "lastCheckpointHash": "abab"}]`, // fewer than 7 digits name nothing
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "ui_messages.json"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := ReadTurns(dir, hash).Turn(c); got != "1700000000123" {
			t.Errorf("%s: turn %q, want the commit's time", name, got)
		}
	}
	dir := t.TempDir()
	gittest.WriteJSON(t, filepath.Join(dir, "ui_messages.json"), []Message{{TS: 42, LastCheckpointHash: "ABABABA"}})
	if got := ReadTurns(dir, hash).Turn(c); got != "42" {
		t.Errorf("abbreviated upper-case hash: turn %q, want 42", got)
	}
}

// Labels that casckpt refuses are left off.
func TestSessionRefusesBadLabels(t *testing.T) {
	for _, id := range []string{"", "a\nb", strings.Repeat("x", 200)} {
		if s := Session("cline", id); s != "" {
			t.Errorf("task %q: session %q", id, s)
		}
	}
	if s := Session("roo", "123"); s != "roo:123" {
		t.Errorf("session %q", s)
	}
}

// A repository whose core.worktree is missing or relative is read with a
// problem and its references unowned: nothing is imported from it, and it
// is never reported migrated (so never cleared).
func TestReadRefusesBadWorktree(t *testing.T) {
	for _, wt := range []string{"", "relative/dir"} {
		dir := filepath.Join(t.TempDir(), "checkpoints")
		r := gittest.NewRepo(t, filepath.Join(dir, ".git"))
		blob := r.Put("blob", []byte("x"))
		tree := r.Put("tree", gittest.Tree(gittest.Entry{Mode: "100644", Name: "f", Hash: blob}))
		r.Write("refs/heads/master", r.Commit(tree, "checkpoint")+"\n")
		cfg := "[core]\n\trepositoryformatversion = 0\n"
		if wt != "" {
			cfg += "\tworktree = " + wt + "\n"
		}
		r.Write("config", cfg)
		u, ok := Read(dir, "task", "cline", nil)
		if !ok || len(u.Sources) != 1 {
			t.Fatalf("worktree %q: %+v %v", wt, u, ok)
		}
		s := u.Sources[0]
		if len(s.Problems) != 1 || !strings.Contains(s.Problems[0], "core.worktree") || len(s.Projects) != 0 || len(s.Unowned) == 0 {
			t.Errorf("worktree %q: %+v", wt, s)
		}
	}
}
