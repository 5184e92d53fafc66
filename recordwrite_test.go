package casckpt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/testtree"
	"github.com/casckpt/casckpt/manifest"
)

// newTestStore opens an empty store in a temporary directory, which must
// verify clean when the test ends (openStore, for the package's own tests).
func newTestStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "store"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if v, err := s.Verify(context.Background()); err != nil || len(v.Damaged) != 0 {
			t.Errorf("the store does not verify when the test ends: damaged %+v, %v", v.Damaged, err)
		}
	})
	return s
}

// ledgerOf returns project workdir's recorded writes.
func ledgerOf(t *testing.T, s *Store, workdir string) map[string]index.Write {
	t.Helper()
	var out map[string]index.Write
	err := s.read(context.Background(), func(v view) (err error) {
		out, err = v.Tx.Writes(workdir)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// snapshotStates returns the state IDs of paths in project workdir's newest
// snapshot (zero for a path it lacks).
func snapshotStates(t *testing.T, s *Store, workdir string, paths ...string) map[string]cas.ID {
	t.Helper()
	ctx := context.Background()
	out := map[string]cas.ID{}
	err := s.read(ctx, func(v view) error {
		snaps, err := v.Tx.Snapshots(workdir)
		if err != nil {
			return err
		}
		for _, p := range paths {
			e, err := manifest.Lookup(ctx, v.Objects, snaps[0].Root, p)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			out[p] = e.StateID()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The ledger holds, for each path, exactly the state a snapshot of the
// path records: files of one and of several chunks, an executable, a link
// (not followed), a directory and a deleted path.
func TestRecordWriteKeysAreASnapshotsStates(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	testtree.Write(t, outside, testtree.Tree{"f": {Data: "outside"}})
	testtree.Write(t, dir, testtree.Tree{
		"small.txt": {Data: "hello\n"}, "big.bin": {Data: strings.Repeat("0123456789abcdef", 50_000)},
		"run.sh": {Data: "#!/bin/sh\n", Exec: true}, "link": {Link: outside}, "empty": {Data: ""},
		"sub/dir": {Dir: true}, "gone": {Data: "x"},
	})
	if _, err := s.RecordWrite(ctx, dir, "small.txt"); err != nil {
		t.Fatal(err)
	}
	workdir, _ := Workdir(dir)
	if got := ledgerOf(t, s, workdir); len(got) != 0 {
		t.Fatalf("a project with no snapshot recorded %v", got)
	}
	if _, err := s.Snapshot(ctx, dir, SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "gone"))
	paths := []string{"small.txt", "big.bin", "run.sh", "link", "empty", "sub/dir", "gone", "never/was"}
	n, err := s.RecordWrite(ctx, dir, append(paths, filepath.Join(workdir, "small.txt"))...)
	if err != nil || n != len(paths) {
		t.Fatalf("recorded %d (%v), want %d", n, err, len(paths))
	}
	ledger := ledgerOf(t, s, workdir)
	want := snapshotStates(t, s, workdir, paths...)
	want["gone"] = cas.ID{}
	for _, p := range paths {
		if w, ok := ledger[p]; !ok || w.State != want[p] {
			t.Errorf("%s: ledger %+v, snapshot state %s", p, w, want[p])
		}
	}
	if want["big.bin"].IsZero() || want["link"] == want["small.txt"] {
		t.Fatalf("states %v", want)
	}
}

func TestRecordWriteRefusesPathsOutside(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{"a": {Data: "a"}})
	if _, err := s.Snapshot(ctx, dir, SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"../x", filepath.Join(filepath.Dir(dir), "x"), ".", dir, "/"} {
		if n, err := s.RecordWrite(ctx, dir, "a", p); !errors.Is(err, ErrRefused) || n != 0 {
			t.Errorf("%q: recorded %d, %v; want refused", p, n, err)
		}
	}
	workdir, _ := Workdir(dir)
	if got := ledgerOf(t, s, workdir); len(got) != 0 {
		t.Fatalf("a refused call recorded %v", got)
	}
	// An absolute path through a link to the project is inside it.
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(dir, alias); err != nil {
		t.Fatal(err)
	}
	if n, err := s.RecordWrite(ctx, alias, filepath.Join(alias, "a"), filepath.Join(alias, "new/b")); err != nil || n != 2 {
		t.Fatalf("through a link: recorded %d, %v", n, err)
	}
	if got := ledgerOf(t, s, workdir); got["a"].State.IsZero() || !got["new/b"].State.IsZero() || len(got) != 2 {
		t.Fatalf("ledger %v", got)
	}
}
