package casckpt_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/testtree"
)

// changeAfterFirstFile snapshots dir with one hasher, so files are read one
// after another, largest first, and runs change once the first (big.bin) is
// stored: after the walk and before any other file is read.
func changeAfterFirstFile(t *testing.T, s *casckpt.Store, dir string, change func()) casckpt.SnapshotResult {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // the scan's default: one hasher
	var once sync.Once
	return mustSnapshot(t, s, dir, casckpt.SnapshotOptions{Progress: func(int64, int64) { once.Do(change) }})
}

// TestSnapshotNeverReadsThroughADirectorySwappedForALink turns a directory
// into a link to outside the project after the scan walked it: the snapshot
// never holds the outside file, and cat never prints it.
func TestSnapshotNeverReadsThroughADirectorySwappedForALink(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	base := t.TempDir()
	dir, outside := filepath.Join(base, "project"), filepath.Join(base, "outside")
	testtree.Write(t, dir, testtree.Tree{
		"big.bin":   {Data: strings.Repeat("b", 100<<10)},
		"sub/a.txt": {Data: "inside"},
	})
	testtree.Write(t, outside, testtree.Tree{"a.txt": {Data: "OUTSIDE secret"}})
	r := changeAfterFirstFile(t, s, dir, func() {
		sub := filepath.Join(dir, "sub")
		if err := os.Rename(sub, sub+".moved"); err != nil {
			t.Error(err)
		}
		if err := os.Symlink(outside, sub); err != nil {
			t.Error(err)
		}
	})
	var out bytes.Buffer
	err := s.Cat(ctx, dir, casckpt.Ref(r.ID.String()), "sub/a.txt", &out)
	if err == nil || strings.Contains(out.String(), "OUTSIDE") {
		t.Fatalf("cat sub/a.txt printed %q (err %v); want it not captured", out.String(), err)
	}
	if r.Files != 1 || r.Bytes != 100<<10 || len(r.Warnings) != 1 || !strings.HasPrefix(r.Warnings[0], "sub/a.txt:") {
		t.Fatalf("snapshot of %d files, %d bytes, warnings %q; want big.bin alone and a warning about sub/a.txt", r.Files, r.Bytes, r.Warnings)
	}
}

// TestSnapshotLeavesOutAFileGrownPastTheLimit grows a file far past the size
// limit after the scan measured it: it is left out and reported, not stored
// whole.
func TestSnapshotLeavesOutAFileGrownPastTheLimit(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{
		"big.bin":   {Data: strings.Repeat("b", 100<<10)},
		"grows.txt": {Data: "small at the walk"},
	})
	r := changeAfterFirstFile(t, s, dir, func() {
		if err := os.Truncate(filepath.Join(dir, "grows.txt"), 64<<20); err != nil {
			t.Error(err)
		}
	})
	if err := s.Cat(ctx, dir, casckpt.Ref(r.ID.String()), "grows.txt", &bytes.Buffer{}); err == nil {
		t.Fatal("a file grown to 64 MiB past the 10 MiB limit was captured")
	}
	if r.Files != 1 || r.Bytes != 100<<10 || len(r.Warnings) != 1 || !strings.HasPrefix(r.Warnings[0], "grows.txt:") {
		t.Fatalf("snapshot of %d files, %d bytes, warnings %q; want big.bin alone and a warning about grows.txt", r.Files, r.Bytes, r.Warnings)
	}
}
