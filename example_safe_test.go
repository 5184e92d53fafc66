package casckpt_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/casckpt/casckpt"
)

// A host records the agent's writes; a safe restore then puts back only
// those, and keeps what a person changed.
func ExampleStore_Restore_safe() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "casckpt-example")
	defer os.RemoveAll(tmp)
	project := filepath.Join(tmp, "project")
	os.MkdirAll(project, 0o755)
	os.WriteFile(filepath.Join(project, "go.mod"), []byte("module x\n"), 0o644)
	os.WriteFile(filepath.Join(project, "main.go"), []byte("package main\n"), 0o644)
	os.WriteFile(filepath.Join(project, "notes.txt"), []byte("todo\n"), 0o644)

	store, _ := casckpt.Open(filepath.Join(tmp, "store"), casckpt.Options{})
	m := casckpt.NewManager(store, casckpt.SnapshotOptions{})
	before := m.EnsureCheckpoint(ctx, project, "before write_file")

	// The agent's write tool rewrites main.go, and the host records it.
	os.WriteFile(filepath.Join(project, "main.go"), []byte("package broken\n"), 0o644)
	m.RecordWrite(ctx, filepath.Join(project, "main.go"))
	// Meanwhile a person edits notes.txt.
	os.WriteFile(filepath.Join(project, "notes.txt"), []byte("todo: review\n"), 0o644)

	res, _ := store.Restore(ctx, project, casckpt.Ref(before.Result.ID.String()), casckpt.RestoreOptions{Safe: true})
	main, _ := os.ReadFile(filepath.Join(project, "main.go"))
	notes, _ := os.ReadFile(filepath.Join(project, "notes.txt"))
	fmt.Printf("safe %v, main.go %q, notes.txt %q\n", res.Safe, main, notes)
	for _, k := range res.Kept {
		fmt.Printf("kept %s: %s\n", k.Path, k.Reason)
	}
	// Output:
	// safe true, main.go "package main\n", notes.txt "todo: review\n"
	// kept notes.txt: not changed by an agent since the snapshot
}

// RecordWrite records what the agent left at paths of a project: its
// content, or its absence.
func ExampleStore_RecordWrite() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "casckpt-example")
	defer os.RemoveAll(tmp)
	store, _ := casckpt.Open(filepath.Join(tmp, "store"), casckpt.Options{})
	os.WriteFile(filepath.Join(tmp, "a.txt"), []byte("a\n"), 0o644)
	store.Snapshot(ctx, tmp, casckpt.SnapshotOptions{})

	os.WriteFile(filepath.Join(tmp, "b.txt"), []byte("b\n"), 0o644)
	os.Remove(filepath.Join(tmp, "a.txt"))
	n, err := store.RecordWrite(ctx, tmp, "b.txt", filepath.Join(tmp, "a.txt"))
	fmt.Println(n, err)
	_, err = store.RecordWrite(ctx, tmp, "../elsewhere.txt")
	fmt.Println(err != nil)
	// Output:
	// 2 <nil>
	// true
}
