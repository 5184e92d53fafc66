package cline

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"unicode/utf16"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/migrate/gitimport"
	"github.com/casckpt/casckpt/migrate/gitimport/gittest"
)

// cwdHash is cline/cline src/integrations/checkpoints/CheckpointUtils.ts
// hashWorkingDir: h = (h*31 + UTF-16 code unit) >>> 0, in decimal, cut
// to 13 digits.
func cwdHash(wd string) string {
	var h uint32
	for _, u := range utf16.Encode([]rune(wd)) {
		h = h*31 + uint32(u)
	}
	s := strconv.FormatUint(uint64(h), 10)
	return s[:min(len(s), 13)]
}

// The identity initShadowGit gives Cline's shadow repositories
// (CheckpointGitOperations.ts).
const userName, userEmail = "Cline Checkpoint", "checkpoint@cline.bot"

// commit is CheckpointTracker.ts commit: "git add . --ignore-errors",
// then "git commit -m checkpoint-<cwdHash>-<taskId> --allow-empty
// --no-verify".
func commit(s *gittest.Shadow, msg string) string {
	return s.Commit(msg, "--allow-empty", "--no-verify")
}

// TestImportClineWithoutGit imports Cline's current per-workdir store and
// an older per-task repository, made by git as Cline does, with git
// hidden: every changed commit is a snapshot with its bytes, modes and
// links, labelled with the task's session and the message's timestamp;
// the empty commit records nothing; a second run imports nothing; the
// source is unchanged; the imported turn undoes; clear-legacy deletes the
// repositories and keeps the tasks' conversations.
func TestImportClineWithoutGit(t *testing.T) {
	ctx := context.Background()
	g := gittest.NewGit(t)
	gs := filepath.Join(t.TempDir(), "globalStorage")
	ext := filepath.Join(gs, ExtensionID)
	wd := filepath.Join(t.TempDir(), "project")
	gittest.WriteFiles(t, wd, map[string]string{"a.txt": "one\n", "src/main.go": "package main\n", "bin/run.sh": "#!/bin/sh\n"})
	must(t, os.Chmod(filepath.Join(wd, "bin/run.sh"), 0o755))
	must(t, os.Symlink("a.txt", filepath.Join(wd, "link")))

	repo := g.InitShadow(filepath.Join(ext, "checkpoints", cwdHash(wd)), wd, userName, userEmail)
	task1, task2 := "1700000000001", "1700000000002"
	gittest.WriteFiles(t, wd, map[string]string{"a.txt": "one\ntwo\n"})
	h1 := commit(repo, "checkpoint-"+cwdHash(wd)+"-"+task1)
	gittest.WriteFiles(t, wd, map[string]string{"src/util.go": "package main\n\nfunc util() {}\n"})
	h2 := commit(repo, "checkpoint-"+cwdHash(wd)+"-"+task1)
	h3 := commit(repo, "checkpoint-"+cwdHash(wd)+"-"+task1) // a read-only tool: empty
	must(t, os.Remove(filepath.Join(wd, "src/main.go")))
	must(t, os.Chmod(filepath.Join(wd, "bin/run.sh"), 0o644))
	must(t, os.Remove(filepath.Join(wd, "link")))
	must(t, os.Symlink("src/util.go", filepath.Join(wd, "link")))
	commit(repo, "checkpoint-"+cwdHash(wd)+"-"+task2)
	gittest.WriteJSON(t, filepath.Join(ext, "tasks", task1, "ui_messages.json"), []map[string]any{
		{"ts": 4000, "type": "say", "say": "text", "text": "hello"},
		{"ts": 5001, "type": "say", "say": "tool", "lastCheckpointHash": h1},
		{"ts": 5002, "type": "say", "say": "tool", "lastCheckpointHash": "HEAD " + h2[:7]},
		{"ts": 5003, "type": "say", "say": "tool", "lastCheckpointHash": h3},
	})

	// The older generation: a repository per task, commits "checkpoint".
	wd2 := filepath.Join(t.TempDir(), "older")
	gittest.WriteFiles(t, wd2, map[string]string{"x.txt": "x\n"})
	old := g.InitShadow(filepath.Join(ext, "tasks", "1600000000000", "checkpoints"), wd2, userName, userEmail)
	gittest.WriteFiles(t, wd2, map[string]string{"x.txt": "xy\n"})
	commit(old, "checkpoint")

	commits, oldCommits := g.Log(filepath.Join(repo.Dir, ".git")), g.Log(filepath.Join(old.Dir, ".git"))
	before := gittest.DirDigest(t, gs)
	gittest.HideGit(t)
	s := gittest.NewStore(t)
	rep, err := Run(ctx, s, gs, gitimport.Options{})
	if err != nil || len(rep.Errors) != 0 || rep.SnapshotsImported != 6 || rep.SnapshotsUnchanged != 1 || rep.Projects != 2 {
		t.Fatalf("run: %+v %v", rep, err)
	}
	list := gittest.CheckHistory(t, s, wd, commits, "imported from cline: ")
	task2Turn := strconv.FormatInt(commits[4].Author*1000, 10)
	want := [][2]string{{"", ""}, {"cline:" + task1, "5001"}, {"cline:" + task1, "5002"}, {"cline:" + task2, task2Turn}}
	for i, w := range want {
		if list[i].Session != w[0] || list[i].Turn != w[1] {
			t.Errorf("snapshot %d: session %q turn %q, want %q %q", i, list[i].Session, list[i].Turn, w[0], w[1])
		}
	}
	oldList := gittest.CheckHistory(t, s, wd2, oldCommits, "imported from cline: ")
	if oldList[1].Session != "cline:1600000000000" || oldList[0].Session != "" {
		t.Errorf("older store labels: %+v", oldList)
	}
	turns, err := s.Turns(ctx, wd, "cline:"+task1)
	if err != nil || len(turns) != 2 || turns[0].ID != "5002" || turns[1].ID != "5001" || turns[1].Start != list[0].ID || turns[0].End != list[2].ID {
		t.Fatalf("turns: %+v %v", turns, err)
	}

	// The last task's turn undoes back to the state before it.
	if _, err := s.Undo(ctx, wd, task2Turn, casckpt.UndoOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := gittest.ReadFiles(t, wd); !maps.Equal(got, commits[3].Files) {
		t.Errorf("after undo: %v, want %v", got, commits[3].Files)
	}

	rep, err = Run(ctx, s, gs, gitimport.Options{})
	if err != nil || rep.SnapshotsImported != 0 || rep.SnapshotsSkipped != 7 || rep.SnapshotsUnchanged != 0 {
		t.Fatalf("second run: %+v %v", rep, err)
	}
	if gittest.DirDigest(t, gs) != before {
		t.Fatal("the import changed the source")
	}
	st, err := Status(ctx, s, gs)
	if err != nil || len(st) != 2 || !st[0].Migrated || !st[1].Migrated {
		t.Fatalf("status: %+v %v", st, err)
	}
	deleted, kept, _, err := ClearLegacy(ctx, s, gs, false)
	if err != nil || len(deleted) != 2 || len(kept) != 0 {
		t.Fatalf("clear: %v %v %v", deleted, kept, err)
	}
	for _, p := range []string{repo.Dir, old.Dir} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(ext, "tasks", task1, "ui_messages.json")); err != nil {
		t.Errorf("the task's conversation went: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
