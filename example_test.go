package casckpt_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/casckpt/casckpt"
)

// A host snapshots a project before the agent edits it, and restores it.
func Example() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "casckpt-example")
	defer os.RemoveAll(tmp)
	project := filepath.Join(tmp, "project")
	os.MkdirAll(project, 0o755)
	os.WriteFile(filepath.Join(project, "main.go"), []byte("package main\n"), 0o644)

	store, _ := casckpt.Open(filepath.Join(tmp, "store"), casckpt.Options{})
	before, _ := store.Snapshot(ctx, project, casckpt.SnapshotOptions{Reason: "before patch"})

	// The agent rewrites the file and adds another.
	os.WriteFile(filepath.Join(project, "main.go"), []byte("package broken\n"), 0o644)
	os.WriteFile(filepath.Join(project, "junk.txt"), []byte("junk"), 0o644)

	res, _ := store.Restore(ctx, project, casckpt.Ref(before.ID.String()), casckpt.RestoreOptions{})
	b, _ := os.ReadFile(filepath.Join(project, "main.go"))
	_, err := os.Stat(filepath.Join(project, "junk.txt"))
	fmt.Printf("written %d, deleted %d, main.go %q, junk.txt gone: %v\n", res.Written, res.Deleted, b, os.IsNotExist(err))
	// Output: written 1, deleted 1, main.go "package main\n", junk.txt gone: true
}

// A Manager takes at most one checkpoint per project per turn and never
// fails the caller.
func ExampleManager() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "casckpt-example")
	defer os.RemoveAll(tmp)
	project := filepath.Join(tmp, "project")
	os.MkdirAll(filepath.Join(project, "src"), 0o755)
	os.WriteFile(filepath.Join(project, "go.mod"), []byte("module x\n"), 0o644)
	os.WriteFile(filepath.Join(project, "src", "a.go"), []byte("package a\n"), 0o644)

	store, _ := casckpt.Open(filepath.Join(tmp, "store"), casckpt.Options{})
	m := casckpt.NewManager(store, casckpt.SnapshotOptions{})
	m.NewTurn("", "")
	first := m.EnsureCheckpoint(ctx, filepath.Join(project, "src", "a.go"), "before write_file")
	second := m.EnsureCheckpoint(ctx, filepath.Join(project, "go.mod"), "before patch")
	fmt.Println(first.Result.Created, first.Err, second.AlreadyDone, filepath.Base(second.Project))
	// Output: true <nil> true project
}

// List shows a project's snapshots, newest first, with their changes.
func ExampleStore_List() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "casckpt-example")
	defer os.RemoveAll(tmp)
	store, _ := casckpt.Open(filepath.Join(tmp, "store"), casckpt.Options{})
	for i, text := range []string{"one\n", "one\ntwo\n"} {
		os.WriteFile(filepath.Join(tmp, "notes.txt"), []byte(text), 0o644)
		store.Snapshot(ctx, tmp, casckpt.SnapshotOptions{Reason: fmt.Sprint("turn ", i+1)})
	}
	list, _ := store.List(ctx, tmp, 0)
	for _, e := range list {
		fmt.Printf("%s: %d file(s) +%d -%d\n", e.Reason, e.FilesChanged, e.Insertions, e.Deletions)
	}
	// Output:
	// turn 2: 1 file(s) +1 -0
	// turn 1: 1 file(s) +1 -0
}

// Turns lists what the agent changed in each turn: the snapshots that
// start and end a turn carry its ID.
func ExampleStore_Turns() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "casckpt-example")
	defer os.RemoveAll(tmp)
	store, _ := casckpt.Open(filepath.Join(tmp, "store"), casckpt.Options{})
	notes := filepath.Join(tmp, "notes.txt")
	os.WriteFile(notes, []byte("one\n"), 0o644)
	store.Snapshot(ctx, tmp, casckpt.SnapshotOptions{Session: "chat-1", Turn: "prompt-1"})
	os.WriteFile(notes, []byte("one\ntwo\nthree\n"), 0o644) // the agent's work
	store.Snapshot(ctx, tmp, casckpt.SnapshotOptions{Session: "chat-1", Turn: "prompt-1", EndTurn: true})
	store.Snapshot(ctx, tmp, casckpt.SnapshotOptions{Session: "chat-1", Turn: "prompt-2"}) // open

	turns, _ := store.Turns(ctx, tmp, "chat-1")
	for _, t := range turns {
		fmt.Printf("%s open=%v: %d file(s) +%d -%d, undoable: %v\n", t.ID, t.Open(), t.FilesChanged, t.Insertions, t.Deletions, t.Undoable() == nil)
	}
	// Output:
	// prompt-2 open=true: 0 file(s) +0 -0, undoable: false
	// prompt-1 open=false: 1 file(s) +2 -0, undoable: true
}

// A Manager records a host's turns: NewTurn names the turn, the first
// checkpoint of each project starts it there, EndTurn ends it.
func ExampleManager_EndTurn() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "casckpt-example")
	defer os.RemoveAll(tmp)
	project := filepath.Join(tmp, "project")
	os.MkdirAll(project, 0o755)
	os.WriteFile(filepath.Join(project, "go.mod"), []byte("module x\n"), 0o644)

	store, _ := casckpt.Open(filepath.Join(tmp, "store"), casckpt.Options{})
	m := casckpt.NewManager(store, casckpt.SnapshotOptions{})
	m.NewTurn("session-7", "turn-1")
	start := m.EnsureCheckpoint(ctx, filepath.Join(project, "go.mod"), "before write_file")
	os.WriteFile(filepath.Join(project, "main.go"), []byte("package main\n"), 0o644) // the agent writes
	for _, rep := range m.EndTurn(ctx) {
		fmt.Println(filepath.Base(rep.Project), "ended:", rep.Result.TurnEnded, rep.Err)
	}
	turns, _ := store.Turns(ctx, project, "")
	fmt.Println(turns[0].ID, turns[0].Session, turns[0].Start == start.Result.ID, turns[0].FilesChanged)
	// Output:
	// project ended: true <nil>
	// turn-1 session-7 true 1
}

// FileLog shows the snapshots in which one file (or directory) changed,
// newest first, and how.
func ExampleStore_FileLog() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "casckpt-example")
	defer os.RemoveAll(tmp)
	project := filepath.Join(tmp, "project")
	os.MkdirAll(project, 0o755)
	store, _ := casckpt.Open(filepath.Join(tmp, "store"), casckpt.Options{})
	edit := func(name, text, reason string) {
		if text == "" {
			os.Remove(filepath.Join(project, name))
		} else {
			os.WriteFile(filepath.Join(project, name), []byte(text), 0o644)
		}
		store.Snapshot(ctx, project, casckpt.SnapshotOptions{Reason: reason})
	}
	edit("main.go", "package main\n", "turn 1")
	edit("README", "hello\n", "turn 2") // main.go unchanged
	edit("main.go", "package main\n\nfunc main() {}\n", "turn 3")
	edit("main.go", "", "turn 4")

	log, _ := store.FileLog(ctx, project, "main.go")
	for _, e := range log {
		fmt.Printf("%s: %s +%d -%d\n", e.Reason, e.Status, e.Insertions, e.Deletions)
	}
	// Output:
	// turn 4: deleted +0 -3
	// turn 3: modified +2 -0
	// turn 1: added +1 -0
}

// Undo reverts one agent turn and keeps what was done since: a file the
// person edited after the turn gets a three-way merge.
func ExampleStore_Undo() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "casckpt-example")
	defer os.RemoveAll(tmp)
	project := filepath.Join(tmp, "project")
	os.MkdirAll(project, 0o755)
	write := func(name, text string) { os.WriteFile(filepath.Join(project, name), []byte(text), 0o644) }
	write("notes.txt", "one\ntwo\nthree\nfour\n")
	store, _ := casckpt.Open(filepath.Join(tmp, "store"), casckpt.Options{})

	// The agent's turn changes the first line and adds a file.
	store.Snapshot(ctx, project, casckpt.SnapshotOptions{Turn: "prompt-1"})
	write("notes.txt", "ONE\ntwo\nthree\nfour\n")
	write("scratch.txt", "tmp\n")
	store.Snapshot(ctx, project, casckpt.SnapshotOptions{Turn: "prompt-1", EndTurn: true})
	// Then a person edits the last line.
	write("notes.txt", "ONE\ntwo\nthree\nFOUR\n")

	res, _ := store.Undo(ctx, project, "", casckpt.UndoOptions{})
	b, _ := os.ReadFile(filepath.Join(project, "notes.txt"))
	fmt.Printf("turn %s: reverted %v, merged %v, %d conflicts\n%s", res.Turn, res.Reverted, res.Merged, len(res.Conflicts), b)
	// Output:
	// turn prompt-1: reverted [scratch.txt], merged [notes.txt], 0 conflicts
	// one
	// two
	// three
	// FOUR
}

// A workflow host marks its session directory's project completed; a
// prune a week later drops it, by the lifecycle's rule, while a running
// workflow stays.
func ExampleStore_SetPolicy() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "casckpt-example")
	defer os.RemoveAll(tmp)
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	store, _ := casckpt.Open(filepath.Join(tmp, "store"), casckpt.Options{Now: func() time.Time { return now }})
	done, running := filepath.Join(tmp, "done"), filepath.Join(tmp, "running")
	for _, dir := range []string{done, running} {
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "checkpoint.json"), []byte(`{"iteration": 7}`), 0o644)
		store.Snapshot(ctx, dir, casckpt.SnapshotOptions{Keep: 10})
	}
	completed, live := casckpt.LifecycleCompleted, casckpt.LifecycleRunning
	store.SetPolicy(ctx, done, casckpt.PolicyChange{Lifecycle: &completed})
	store.SetPolicy(ctx, running, casckpt.PolicyChange{Lifecycle: &live})

	now = now.AddDate(0, 0, 8)
	res, _ := store.Prune(ctx, casckpt.PruneOptions{StaleAfter: 7 * 24 * time.Hour, CompletedAfter: 7 * 24 * time.Hour})
	p, _ := store.Policy(ctx, running)
	fmt.Printf("dropped %d completed project (rule %s); %s kept, %s since %s\n",
		res.DeletedCompleted, res.Drops[0].Rule, filepath.Base(p.Project), p.Lifecycle, p.LifecycleSince.Format("Jan 2"))
	// Output: dropped 1 completed project (rule completed); running kept, running since Mar 1
}
