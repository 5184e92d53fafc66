package casckpt_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/testtree"
)

// TestSnapshotRecordsExclusions: a snapshot taken with Exclude and
// MaxDirFiles leaves out what they match, lists them, and a restore of it
// (to a tree where what they excluded changed) and a diff of it with the
// working tree apply them again: the excluded paths are neither touched
// nor reported; an older snapshot without them restores them away as
// before.
func TestSnapshotRecordsExclusions(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{"main.go": {Data: "v1"}})
	plain := mustSnapshot(t, s, dir, casckpt.SnapshotOptions{})
	excluded := testtree.Tree{".tox/py/x": {Data: "tox"}, "a/.tox/y": {Data: "y"}}
	for i := range 5 {
		excluded[fmt.Sprintf("gen/f%d", i)] = testtree.Entry{Data: "g"}
	}
	testtree.Write(t, dir, excluded)
	opts := casckpt.SnapshotOptions{Exclude: []string{".tox/"}, MaxDirFiles: 5}
	snap := mustSnapshot(t, s, dir, opts)
	if snap.Files != 1 {
		t.Fatalf("captured %d files, want main.go alone", snap.Files)
	}
	list, err := s.List(ctx, dir, 0)
	if err != nil || list[0].ID != snap.ID || !slices.Equal(list[0].Exclude, opts.Exclude) || list[0].MaxDirFiles != 5 || list[1].Exclude != nil {
		t.Fatalf("list: %+v %v", list, err)
	}
	excluded["gen/f0"] = testtree.Entry{Data: "changed"}
	excluded[".tox/new"] = testtree.Entry{Data: "new"}
	testtree.Write(t, dir, excluded)
	testtree.Write(t, dir, testtree.Tree{"main.go": {Data: "v2"}})
	d, err := s.Diff(ctx, dir, casckpt.Ref(snap.ID.String()), casckpt.DiffOptions{})
	if err != nil || len(d.Files) != 1 || d.Files[0].Path != "main.go" {
		t.Fatalf("diff with the working tree: %+v %v", d.Files, err)
	}
	if _, err := s.Restore(ctx, dir, casckpt.Ref(snap.ID.String()), casckpt.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	got := testtree.Read(t, dir)
	for p, e := range excluded {
		if got[p] != e {
			t.Fatalf("restore touched excluded %s: %+v", p, got[p])
		}
	}
	if got["main.go"].Data != "v1" {
		t.Fatal("main.go not restored")
	}
	if _, err := s.Restore(ctx, dir, casckpt.Ref(plain.ID.String()), casckpt.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := testtree.Read(t, dir); len(got) != 1 {
		t.Fatalf("a snapshot taken without the exclusions kept %d paths, want main.go alone", len(got))
	}
	if _, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{Exclude: []string{"a\nb"}}); err == nil {
		t.Fatal("a pattern of two lines was taken")
	}
}

// TestRestoreOfDirectoryGrownPastMaxDirFiles: a directory the snapshot
// holds that has since grown past its MaxDirFiles is restored all the
// same (the restore's scan captures it), and the pre-restore snapshot
// holds the files it deletes.
func TestRestoreOfDirectoryGrownPastMaxDirFiles(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{"src/a": {Data: "a"}, "src/b": {Data: "b"}})
	snap := mustSnapshot(t, s, dir, casckpt.SnapshotOptions{MaxDirFiles: 3})
	testtree.Write(t, dir, testtree.Tree{"src/a": {Data: "changed"}, "src/c": {Data: "new"}, "src/d": {Data: "new"}})
	r, err := s.Restore(ctx, dir, casckpt.Ref(snap.ID.String()), casckpt.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := testtree.Read(t, dir); len(got) != 3 || got["src/a"].Data != "a" || got["src/b"].Data != "b" {
		t.Fatalf("after the restore: %+v", got)
	}
	var buf strings.Builder
	if err := s.Cat(ctx, dir, casckpt.Ref(r.PreRestoreID.String()), "src/c", &buf); err != nil || buf.String() != "new" {
		t.Fatalf("the pre-restore snapshot's src/c: %q, %v", buf.String(), err)
	}
}
