package casckpt

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/manifest"
)

// countingGetter counts the objects read through it.
type countingGetter struct {
	g    cas.Getter
	gets atomic.Int64
}

func (c *countingGetter) Get(ctx context.Context, id cas.ID) ([]byte, error) {
	c.gets.Add(1)
	return c.g.Get(ctx, id)
}

// logOf runs fileLog of p over the snapshots of dir, reading through a
// countingGetter, and returns the log and the number of objects read.
func logOf(t *testing.T, s *Store, dir, p string) ([]LogEntry, int64) {
	t.Helper()
	workdir, err := Workdir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []LogEntry
	var gets int64
	err = s.read(context.Background(), func(v view) error {
		snaps, err := v.Tx.Snapshots(workdir)
		if err != nil {
			return err
		}
		g := &countingGetter{g: v.Objects}
		out, err = fileLog(context.Background(), g, snaps, p)
		gets = g.gets.Load()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, gets
}

// openLogStore opens a new store that must verify clean when the test
// ends.
func openLogStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "store"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if v, err := s.Verify(context.Background()); err != nil || len(v.Damaged) != 0 {
			t.Errorf("the store does not verify: %+v, %v", v.Damaged, err)
		}
	})
	return s
}

func writeTestFile(t *testing.T, dir, p, data string) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFileLogReadsOnlyTheWayThatChanged: from one snapshot to the next,
// FileLog reads the directories on the way to the path only until one
// did not change, and each tree once.
func TestFileLogReadsOnlyTheWayThatChanged(t *testing.T) {
	ctx := context.Background()
	s := openLogStore(t)
	dir := t.TempDir()
	for i := range 40 { // other directories that a naive walk would read
		writeTestFile(t, dir, fmt.Sprintf("other%02d/f.txt", i), "x\n")
	}
	writeTestFile(t, dir, "a/b/c.txt", "one\ntwo\n")
	writeTestFile(t, dir, "x/y.txt", "y\n")
	edits := []struct{ path, data string }{
		{"", ""}, // the first snapshot
		{"x/y.txt", "y2\n"},
		{"top.txt", "top\n"},
		{"a/b/c.txt", "one\nthree\nfour\n"},
		{"x/y.txt", "y3\n"},
	}
	for i, e := range edits {
		if e.path != "" {
			writeTestFile(t, dir, e.path, e.data)
		}
		if r, err := s.Snapshot(ctx, dir, SnapshotOptions{Reason: fmt.Sprint(i)}); err != nil || !r.Created {
			t.Fatalf("snapshot %d: %+v %v", i, r, err)
		}
	}
	log, gets := logOf(t, s, dir, "a/b/c.txt")
	if len(log) != 2 || log[0].Reason != "3" || log[0].Status != Modified || log[0].Insertions != 2 || log[0].Deletions != 1 ||
		log[1].Reason != "0" || log[1].Status != Added || log[1].Insertions != 2 {
		t.Fatalf("log of a/b/c.txt: %+v", log)
	}
	// Five roots, a and a/b as they were before and after snapshot 3, and
	// c.txt's two contents for the line counts. A walk from each root
	// would read 15 trees.
	if gets != 5+2+2+2 {
		t.Fatalf("FileLog read %d objects, want 11", gets)
	}
}

// TestFileLogAgreesWithWholeTreeDiffs compares FileLog over random
// histories (files written, deleted, turned into links or directories)
// with what diffs of whole trees and lookups from each root say.
func TestFileLogAgreesWithWholeTreeDiffs(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			s := openLogStore(t)
			dir := t.TempDir()
			rng := rand.New(rand.NewPCG(seed, 11))
			for step := range 14 {
				randomEdit(t, rng, dir, step)
				if _, err := s.Snapshot(ctx, dir, SnapshotOptions{Reason: fmt.Sprint(step), Keep: -1}); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range []string{"", "a", "a/q", "d", "d/x", "d/e", "d/e/z", "never"} {
				got, _ := logOf(t, s, dir, p)
				want := bruteLog(t, s, dir, p)
				if fmt.Sprint(summary(got)) != fmt.Sprint(summary(want)) {
					t.Fatalf("log of %q:\n got %v\nwant %v", p, summary(got), summary(want))
				}
			}
		})
	}
}

// randomPaths are the paths randomEdit writes; some are both files and
// directories in turn.
var randomPaths = []string{"a", "a/q", "d/x", "d/y", "d/e", "d/e/z", "b.bin"}

// randomEdit writes, deletes or links one of randomPaths.
func randomEdit(t *testing.T, rng *rand.Rand, dir string, step int) {
	t.Helper()
	p := randomPaths[rng.IntN(len(randomPaths))]
	full := filepath.Join(dir, filepath.FromSlash(p))
	// Make room: no file where a parent directory must be, nothing at p.
	for q := filepath.Dir(full); q != dir; q = filepath.Dir(q) {
		if st, err := os.Lstat(q); err == nil && !st.IsDir() {
			os.Remove(q)
		}
	}
	op := rng.IntN(5)
	if op != 4 || step == 0 {
		os.RemoveAll(full)
	}
	switch op {
	case 0, 1:
		var b strings.Builder
		for i := range 1 + rng.IntN(6) {
			fmt.Fprintf(&b, "line %d of step %d\n", i, rng.IntN(3)*step)
		}
		writeTestFile(t, dir, p, b.String())
	case 2:
		writeTestFile(t, dir, p, "\x00binary\x00"+fmt.Sprint(step))
	case 3:
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.Symlink(fmt.Sprintf("target-%d", rng.IntN(2)), full); err != nil {
			t.Fatal(err)
		}
	}
}

type logLine struct {
	reason   string
	status   Status
	ins, del int64
}

func summary(log []LogEntry) []logLine {
	out := []logLine{}
	for _, e := range log {
		out = append(out, logLine{e.Reason, e.Status, e.Insertions, e.Deletions})
	}
	return out
}

// bruteLog is FileLog the slow way: the path looked up from every root,
// and the counts of whole-tree diffs summed over the files at or below it.
func bruteLog(t *testing.T, s *Store, dir, p string) []LogEntry {
	t.Helper()
	workdir, _ := Workdir(dir)
	ctx := context.Background()
	out := []LogEntry{}
	err := s.read(ctx, func(v view) error {
		snaps, err := v.Tx.Snapshots(workdir)
		if err != nil {
			return err
		}
		for i, sn := range snaps {
			var old manifest.Entry
			parentRoot := manifest.EmptyTreeID
			if i+1 < len(snaps) {
				parentRoot = snaps[i+1].Root
				old, _ = manifest.Lookup(ctx, v.Objects, parentRoot, p)
			}
			cur, _ := manifest.Lookup(ctx, v.Objects, sn.Root, p)
			status, changed := pathStatus(old, cur)
			if !changed {
				continue
			}
			changes, err := manifest.Diff(ctx, v.Objects, parentRoot, sn.Root)
			if err != nil {
				return err
			}
			files, err := fileDiffs(ctx, changes, storeContent{v.Objects}, storeContent{v.Objects}, DiffOptions{})
			if err != nil {
				return err
			}
			e := LogEntry{Snapshot: hostSnapshot(sn), Status: status}
			for _, f := range files {
				if p == "" || f.Path == p || strings.HasPrefix(f.Path, p+"/") {
					e.Insertions += f.Insertions
					e.Deletions += f.Deletions
				}
			}
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
