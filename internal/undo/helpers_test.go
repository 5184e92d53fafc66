package undo

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/castest"
	"github.com/casckpt/casckpt/internal/restorer"
	"github.com/casckpt/casckpt/internal/testtree"
	"github.com/casckpt/casckpt/manifest"
)

// putTree stores tree in m, its files chunked as a snapshot chunks them,
// and returns its root's ID.
func putTree(t *testing.T, m *castest.Memory, tree testtree.Tree) cas.ID {
	t.Helper()
	ctx := context.Background()
	all := testtree.WithDirs(tree)
	var put func(dir string) cas.ID
	put = func(dir string) cas.ID {
		var mt manifest.Tree
		for p, e := range all {
			if path.Dir(p) != dir {
				continue
			}
			me := manifest.Entry{Name: path.Base(p)}
			var err error
			switch {
			case e.Dir:
				me.Kind, me.Tree = manifest.KindDir, put(p)
			case e.Link != "":
				me.Kind, me.Target, me.Size = manifest.KindSymlink, e.Link, int64(len(e.Link))
			default:
				me, err = manifest.PutFile(ctx, m, me.Name, strings.NewReader(e.Data), int64(len(e.Data)), e.Exec)
			}
			if err != nil {
				t.Fatal(err)
			}
			mt.Entries = append(mt.Entries, me)
		}
		mt.Sort()
		id, err := manifest.Put(ctx, m, mt)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	return put(".")
}

// undoCase is an undo of a turn from start to end in a working tree that
// holds work (as scanned) and, on disk, disk's entries over it (excluded
// ones, or files changed after the scan).
type undoCase struct {
	start, end, work, disk testtree.Tree
	excluded               []string
}

// run plans the undo in a new directory, checks that the plan's chunks
// verify, applies it with the restore writer, and returns the plan and
// the tree left on disk.
func (c undoCase) run(t *testing.T) (Plan, testtree.Tree) {
	t.Helper()
	ctx := context.Background()
	m := castest.NewMemory()
	in := Input{Start: putTree(t, m, c.start), End: putTree(t, m, c.end), Work: putTree(t, m, c.work), Excluded: c.excluded}
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.WithDirs(testtree.Edit(c.work, c.disk)))
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	in.ReadWork = func(p string) ([]byte, error) { return root.ReadFile(filepath.FromSlash(p)) }
	plan, err := NewPlan(ctx, m, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := restorer.Verify(ctx, plan.Content(m), plan.Restore); err != nil {
		t.Fatal(err)
	}
	if _, err := restorer.Apply(ctx, restorer.RootFS(root), plan.Content(m), plan.Restore, restorer.Options{}); err != nil {
		t.Fatal(err)
	}
	return plan, testtree.Read(t, dir)
}
