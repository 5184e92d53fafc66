package main

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/migrate/gitimport/gittest"
	"github.com/casckpt/casckpt/migrate/roo"
)

// TestMigrateFromAgentRoo runs migrate --from-agent on a Roo Code store
// made by git as Roo Code does (see migrate/roo's test), at VS Code's
// default location, with no git on the command's PATH: status lists it
// with its agent, migrate imports it with the task's session, turns lists
// the turns, undo and restore --safe work on them, a second migrate
// imports nothing (after a repair too), and clear-legacy --from-agent deletes it.
func TestMigrateFromAgentRoo(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the default location tested is Linux's")
	}
	e := newEnv(t)
	g := gittest.NewGit(t)
	home := e.vars["HOME"]
	e.vars["XDG_CONFIG_HOME"] = filepath.Join(home, ".config")
	gs := filepath.Join(home, ".config", "Code", "User", "globalStorage")
	task := "1700000000123"
	wd := filepath.Join(home, "proj")
	gittest.WriteFiles(t, wd, map[string]string{"f.txt": "v1\n"})
	repo := g.InitShadow(filepath.Join(gs, roo.ExtensionID, "tasks", task, "checkpoints"), wd, "Roo Code", "noreply@example.com")
	gittest.WriteFiles(t, wd, map[string]string{"f.txt": "v2\n"})
	h1 := repo.Commit("Task: " + task + ", Time: 1")
	gittest.WriteFiles(t, wd, map[string]string{"f.txt": "v3\n", "g.txt": "new\n"})
	h2 := repo.Commit("Task: " + task + ", Time: 2")
	gittest.WriteJSON(t, filepath.Join(gs, roo.ExtensionID, "tasks", task, "ui_messages.json"), []map[string]any{
		{"ts": 9001, "say": "checkpoint_saved", "text": h1}, {"ts": 9002, "say": "checkpoint_saved", "text": h2}})

	st := jsonOf[map[string]any](t, e.ok("status", "--json").out)
	legacy := st["legacy"].([]any)
	if len(legacy) != 1 || legacy[0].(map[string]any)["agent"] != "roo" || legacy[0].(map[string]any)["migrated"] != false {
		t.Fatalf("status before: %v", legacy)
	}
	if out := e.ok("status").out; !strings.Contains(out, "roo checkpoint store "+repo.Dir) || !strings.Contains(out, "run casckpt migrate --from-agent roo") {
		t.Fatalf("status before, for people: %q", out)
	}
	m := jsonOf[map[string]any](t, e.ok("migrate", "--from-agent", "roo", "--json").out)
	if !slices.Equal(keys(m), []string{"agent", "errors", "projects", "snapshots_imported", "snapshots_skipped"}) ||
		m["agent"] != "roo" || m["snapshots_imported"] != 3.0 || m["projects"] != 1.0 {
		t.Fatalf("migrate: %v", m)
	}
	turns := jsonOf[[]map[string]any](t, e.ok("turns", wd, "--json").out)
	if len(turns) != 2 || turns[0]["turn"] != "9002" || turns[0]["session"] != "roo:"+task || turns[1]["turn"] != "9001" {
		t.Fatalf("turns: %v", turns)
	}
	e.ok("undo", wd, "9002")
	if got := gittest.ReadFiles(t, wd); len(got) != 1 || got["f.txt"].Data != "v2\n" {
		t.Fatalf("after undo: %v", got)
	}
	e.ok("restore", wd, "@1", "--safe") // @1: the pre-undo snapshot, the agent's last state
	if got := gittest.ReadFiles(t, wd); len(got) != 2 || got["f.txt"].Data != "v3\n" || got["g.txt"].Data != "new\n" {
		t.Fatalf("after restore --safe: %v", got)
	}
	again := jsonOf[map[string]any](t, e.ok("migrate", "--from-agent", "all", "--json").out)
	if again["agent"] != "all" || again["snapshots_imported"] != 0.0 || again["snapshots_skipped"] != 3.0 {
		t.Fatalf("second migrate: %v", again)
	}
	// A lost database, repaired from the packs, keeps the labels and the
	// turns, and still imports nothing.
	must(t, os.Remove(filepath.Join(e.store, "casckpt.db")))
	e.ok("repair")
	if again := jsonOf[map[string]any](t, e.ok("migrate", "--from-agent", "roo", "--json").out); again["snapshots_imported"] != 0.0 {
		t.Fatalf("migrate after a repair: %v", again)
	}
	if turns := jsonOf[[]map[string]any](t, e.ok("turns", wd, "--json").out); len(turns) != 2 || turns[1]["session"] != "roo:"+task {
		t.Fatalf("turns after a repair: %v", turns)
	}
	failsWith(t, e.run("migrate", "--from-agent", "hermes"), 1, "cline, roo, gemini or all")
	cl := jsonOf[map[string]any](t, e.ok("clear-legacy", "--from-agent", "roo", "--yes", "--json").out)
	if len(cl["deleted"].([]any)) != 1 || len(cl["kept"].([]any)) != 0 {
		t.Fatalf("clear-legacy: %v", cl)
	}
	if _, err := os.Stat(repo.Dir); !os.IsNotExist(err) {
		t.Fatal("the imported store is still there")
	}
}
