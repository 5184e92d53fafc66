package casckpt_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/testtree"
)

func TestSnapshotRestoreRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{
		"README.md":     {Data: "hello\n"},
		"bin/run.sh":    {Data: "#!/bin/sh\necho hi\n", Exec: true},
		"src/a.go":      {Data: "package a\n"},
		"src/link":      {Link: "a.go"},
		"empty":         {Dir: true},
		"big.bin":       {Data: string(bytes.Repeat([]byte("0123456789abcdef"), 100_000))},
		"weird name\nx": {Data: "newline"},
	})
	v1 := testtree.Read(t, dir)
	r1, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{Reason: "one"})
	if err != nil {
		t.Fatal(err)
	}
	if !r1.Created || r1.Files != 6 {
		t.Fatalf("first snapshot: %+v", r1)
	}
	again, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{})
	if err != nil || again.Created || again.ID != r1.ID {
		t.Fatalf("no-change snapshot: %+v %v", again, err)
	}
	// Edit: change, delete, add, flip exec, retarget link, replace dir with file.
	os.WriteFile(filepath.Join(dir, "src/a.go"), []byte("package a\n// more\n"), 0o644)
	os.Remove(filepath.Join(dir, "README.md"))
	os.WriteFile(filepath.Join(dir, "new.txt"), []byte("new"), 0o644)
	os.Chmod(filepath.Join(dir, "bin/run.sh"), 0o644)
	os.Remove(filepath.Join(dir, "src/link"))
	os.Symlink("elsewhere", filepath.Join(dir, "src/link"))
	os.Remove(filepath.Join(dir, "empty"))
	os.WriteFile(filepath.Join(dir, "empty"), []byte("now a file"), 0o644)
	v2 := testtree.Read(t, dir)
	r2, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{Reason: "two"})
	if err != nil || !r2.Created {
		t.Fatalf("second snapshot: %+v %v", r2, err)
	}
	rr, err := s.Restore(ctx, dir, casckpt.Ref(r1.ID.String()[:8]), casckpt.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := testtree.Equal(v1, testtree.Read(t, dir)); d != "" {
		t.Fatalf("restore to v1: %s (%+v)", d, rr)
	}
	if _, err := s.Restore(ctx, dir, casckpt.Ref(r2.ID.String()), casckpt.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := testtree.Equal(v2, testtree.Read(t, dir)); d != "" {
		t.Fatalf("restore to v2: %s", d)
	}
	list, err := s.List(ctx, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range list {
		t.Logf("%s %q files=%d +%d -%d", e.ID.Short(), e.Reason, e.FilesChanged, e.Insertions, e.Deletions)
	}
}
