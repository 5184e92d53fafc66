package roo

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/migrate/gitimport"
	"github.com/casckpt/casckpt/migrate/gitimport/gittest"
)

// TestImportRooWithoutGit imports Roo Code's per-task repositories, made
// by git as Roo Code does (RooCodeInc/Roo-Code
// src/services/checkpoints/ShadowCheckpointService.ts initShadowGit with
// user "Roo Code" <noreply@example.com>; saveCheckpoint: "git add .
// --ignore-errors", "git commit -m 'Task: <taskId>, Time: <ms>'", with
// --allow-empty when forced), with git hidden: every changed commit is a
// snapshot with its bytes, modes and links, labelled roo:<taskId> and the
// timestamp of its checkpoint_saved message; the forced empty commit
// records nothing; the turn undoes; a second run imports nothing; the
// source is unchanged; clear-legacy deletes only the checkpoints.
func TestImportRooWithoutGit(t *testing.T) {
	ctx := context.Background()
	g := gittest.NewGit(t)
	gs := filepath.Join(t.TempDir(), "globalStorage")
	task := "0b6f5c1e-4a39-4a52-9a51-3f1d0e2b7c44"
	taskDir := filepath.Join(gs, ExtensionID, "tasks", task)
	wd := filepath.Join(t.TempDir(), "project")
	gittest.WriteFiles(t, wd, map[string]string{"README.md": "# p\n", "lib/a.py": "x = 1\n"})
	repo := g.InitShadow(filepath.Join(taskDir, "checkpoints"), wd, "Roo Code", "noreply@example.com")
	msg := func() string { return "Task: " + task + ", Time: " + strconv.FormatInt(g.Clock*1000+60_000, 10) }
	gittest.WriteFiles(t, wd, map[string]string{"lib/a.py": "x = 2\n"})
	h1 := repo.Commit(msg())
	h2 := repo.Commit(msg(), "--allow-empty") // forced, nothing changed
	gittest.WriteFiles(t, wd, map[string]string{"lib/b.py": "y = 3\n"})
	if err := os.Chmod(filepath.Join(wd, "lib/b.py"), 0o755); err != nil {
		t.Fatal(err)
	}
	h3 := repo.Commit(msg())
	gittest.WriteJSON(t, filepath.Join(taskDir, "ui_messages.json"), []map[string]any{
		{"ts": 7001, "type": "say", "say": "checkpoint_saved", "text": h1},
		{"ts": 7002, "type": "say", "say": "checkpoint_saved", "text": h2},
		{"ts": 7003, "type": "say", "say": "checkpoint_saved", "text": h3},
	})
	commits := g.Log(filepath.Join(repo.Dir, ".git"))
	before := gittest.DirDigest(t, gs)
	gittest.HideGit(t)

	s := gittest.NewStore(t)
	rep, err := Run(ctx, s, gs, gitimport.Options{})
	if err != nil || len(rep.Errors) != 0 || rep.SnapshotsImported != 3 || rep.SnapshotsUnchanged != 1 {
		t.Fatalf("run: %+v %v", rep, err)
	}
	list := gittest.CheckHistory(t, s, wd, commits, "imported from roo: ")
	session := "roo:" + task
	if list[0].Session != "" || list[1].Session != session || list[1].Turn != "7001" || list[2].Session != session || list[2].Turn != "7003" {
		t.Errorf("labels: %+v", list)
	}
	turns, err := s.Turns(ctx, wd, session)
	if err != nil || len(turns) != 2 || turns[0].ID != "7003" || turns[0].Start != list[1].ID || turns[0].End != list[2].ID {
		t.Fatalf("turns: %+v %v", turns, err)
	}
	if _, err := s.Undo(ctx, wd, "7003", casckpt.UndoOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := gittest.ReadFiles(t, wd); !maps.Equal(got, commits[1].Files) {
		t.Errorf("after undo: %v, want %v", got, commits[1].Files)
	}
	rep, err = Run(ctx, s, gs, gitimport.Options{})
	if err != nil || rep.SnapshotsImported != 0 || rep.SnapshotsSkipped != 4 {
		t.Fatalf("second run: %+v %v", rep, err)
	}
	if gittest.DirDigest(t, gs) != before {
		t.Fatal("the import changed the source")
	}
	deleted, kept, _, err := ClearLegacy(ctx, s, gs, false)
	if err != nil || len(deleted) != 1 || deleted[0] != repo.Dir || len(kept) != 0 {
		t.Fatalf("clear: %v %v %v", deleted, kept, err)
	}
	if _, err := os.Stat(filepath.Join(taskDir, "ui_messages.json")); err != nil {
		t.Errorf("the task's conversation went: %v", err)
	}
}
