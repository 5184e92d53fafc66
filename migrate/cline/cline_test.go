package cline

import (
	"context"
	"encoding/json"
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

// shadow is one of Cline's shadow repositories, made with git as Cline
// does it.
type shadow struct {
	g       *gittest.Git
	dir, wd string
}

// initShadow is CheckpointGitOperations.ts initShadowGit: simple-git in
// the checkpoints directory runs "git init", sets core.worktree to the
// workspace, commit.gpgSign false, user.name "Cline Checkpoint" and
// user.email checkpoint@cline.bot, stages the workspace ("git add .
// --ignore-errors") and commits "initial commit" --allow-empty.
func initShadow(t *testing.T, g *gittest.Git, dir, wd string) *shadow {
	must(t, os.MkdirAll(dir, 0o755))
	g.Run(dir, nil, "init")
	g.Run(dir, nil, "config", "core.worktree", wd)
	g.Run(dir, nil, "config", "commit.gpgSign", "false")
	g.Run(dir, nil, "config", "user.name", "Cline Checkpoint")
	g.Run(dir, nil, "config", "user.email", "checkpoint@cline.bot")
	s := &shadow{g: g, dir: dir, wd: wd}
	s.commit("initial commit")
	return s
}

// commit is CheckpointTracker.ts commit: "git add . --ignore-errors",
// then "git commit -m <msg> --allow-empty --no-verify"; it returns the
// commit's hash.
func (s *shadow) commit(msg string) string {
	s.g.Tick()
	s.g.Run(s.dir, nil, "add", ".", "--ignore-errors")
	s.g.Run(s.dir, nil, "commit", "-m", msg, "--allow-empty", "--no-verify")
	return s.g.Run(s.dir, nil, "rev-parse", "HEAD")
}

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, data := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
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
	write(t, wd, map[string]string{"a.txt": "one\n", "src/main.go": "package main\n", "bin/run.sh": "#!/bin/sh\n"})
	must(t, os.Chmod(filepath.Join(wd, "bin/run.sh"), 0o755))
	must(t, os.Symlink("a.txt", filepath.Join(wd, "link")))

	repo := initShadow(t, g, filepath.Join(ext, "checkpoints", cwdHash(wd)), wd)
	task1, task2 := "1700000000001", "1700000000002"
	write(t, wd, map[string]string{"a.txt": "one\ntwo\n"})
	h1 := repo.commit("checkpoint-" + cwdHash(wd) + "-" + task1)
	write(t, wd, map[string]string{"src/util.go": "package main\n\nfunc util() {}\n"})
	h2 := repo.commit("checkpoint-" + cwdHash(wd) + "-" + task1)
	h3 := repo.commit("checkpoint-" + cwdHash(wd) + "-" + task1) // a read-only tool: empty
	must(t, os.Remove(filepath.Join(wd, "src/main.go")))
	must(t, os.Chmod(filepath.Join(wd, "bin/run.sh"), 0o644))
	must(t, os.Remove(filepath.Join(wd, "link")))
	must(t, os.Symlink("src/util.go", filepath.Join(wd, "link")))
	repo.commit("checkpoint-" + cwdHash(wd) + "-" + task2)
	writeJSON(t, filepath.Join(ext, "tasks", task1, "ui_messages.json"), []map[string]any{
		{"ts": 4000, "type": "say", "say": "text", "text": "hello"},
		{"ts": 5001, "type": "say", "say": "tool", "lastCheckpointHash": h1},
		{"ts": 5002, "type": "say", "say": "tool", "lastCheckpointHash": "HEAD " + h2[:7]},
		{"ts": 5003, "type": "say", "say": "tool", "lastCheckpointHash": h3},
	})

	// The older generation: a repository per task, commits "checkpoint".
	wd2 := filepath.Join(t.TempDir(), "older")
	write(t, wd2, map[string]string{"x.txt": "x\n"})
	old := initShadow(t, g, filepath.Join(ext, "tasks", "1600000000000", "checkpoints"), wd2)
	write(t, wd2, map[string]string{"x.txt": "xy\n"})
	old.commit("checkpoint")

	commits, oldCommits := g.Log(filepath.Join(repo.dir, ".git")), g.Log(filepath.Join(old.dir, ".git"))
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
	for _, p := range []string{repo.dir, old.dir} {
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
