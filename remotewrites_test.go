package casckpt_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/s3test"
)

// TestS3RecordedWritesAreShared: the writes an agent records on one
// machine (record-write) are in the bucket, not only in that machine's
// cache: a safe restore from another machine's new cache puts back what
// the agent wrote and keeps what the person edited, as the first
// machine's would, instead of falling back to the whole tree.
func TestS3RecordedWritesAreShared(t *testing.T) {
	srv := s3test.Start(t)
	url := s3URL(srv)
	ctx := context.Background()
	a := openGC(t, srv, url, nil)
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("agent.txt", "before\n")
	write("person.txt", "before\n")
	first, err := a.Snapshot(ctx, dir, casckpt.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	write("agent.txt", "the agent's edit\n")
	if n, err := a.RecordWrite(ctx, dir, "agent.txt"); err != nil || n != 1 {
		t.Fatalf("record-write: %d, %v", n, err)
	}
	write("person.txt", "the person's edit\n")

	b := openGC(t, srv, url, nil) // another machine: a new cache
	res, err := b.Restore(ctx, dir, casckpt.Ref(first.ID.String()), casckpt.RestoreOptions{Safe: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Safe || len(res.Kept) != 1 || res.Kept[0].Path != "person.txt" {
		t.Fatalf("safe restore from a new cache: safe %v, kept %+v; want safe, person.txt kept", res.Safe, res.Kept)
	}
	for name, want := range map[string]string{"agent.txt": "before\n", "person.txt": "the person's edit\n"} {
		if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != want {
			t.Fatalf("%s after the safe restore: %q, want %q", name, got, want)
		}
	}
}
