package restorer

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/castest"
	"github.com/casckpt/casckpt/internal/testtree"
	"github.com/casckpt/casckpt/manifest"
)

// item is one entry of a tree given as data, spec a tree as data
// (testtree's), with the directories above its paths implied.
type (
	item = testtree.Entry
	spec = testtree.Tree
)

// withDirs returns s with every directory above its paths listed.
func withDirs(s spec) spec { return testtree.WithDirs(s) }

// plus returns the union of a and b.
func plus(a, b spec) spec { return testtree.Edit(a, b) }

// chunkSize is small so that files span several chunks.
const chunkSize = 4

// putTree stores s in m and returns its root tree's ID.
func putTree(t *testing.T, m *castest.Memory, s spec) cas.ID {
	t.Helper()
	id, err := putDir(context.Background(), m, withDirs(s), "")
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func putDir(ctx context.Context, m *castest.Memory, s spec, dir string) (cas.ID, error) {
	var tree manifest.Tree
	for p, it := range s {
		if parent := strings.TrimPrefix(path.Dir(p), "."); parent != dir {
			continue
		}
		e := manifest.Entry{Name: path.Base(p)}
		switch {
		case it.Dir:
			e.Kind = manifest.KindDir
			id, err := putDir(ctx, m, s, p)
			if err != nil {
				return cas.ID{}, err
			}
			e.Tree = id
		case it.Link != "":
			e.Kind, e.Target, e.Size = manifest.KindSymlink, it.Link, int64(len(it.Link))
		default:
			e.Kind, e.Exec, e.Size = manifest.KindFile, it.Exec, int64(len(it.Data))
			for b := []byte(it.Data); len(b) > 0; b = b[min(chunkSize, len(b)):] {
				id, err := m.Put(ctx, cas.KindChunk, b[:min(chunkSize, len(b))])
				if err != nil {
					return cas.ID{}, err
				}
				e.Chunks = append(e.Chunks, id)
			}
		}
		tree.Entries = append(tree.Entries, e)
	}
	tree.Sort()
	return manifest.Put(ctx, m, tree)
}

// planOf is the plan from tree a to tree b, both in m, with no paths and
// nothing excluded.
func planOf(t *testing.T, m *castest.Memory, a, b spec) Plan {
	t.Helper()
	changes, err := manifest.Diff(context.Background(), m, putTree(t, m, a), putTree(t, m, b))
	if err != nil {
		t.Fatal(err)
	}
	return NewPlan(changes, nil, nil, nil)
}

// writeDir creates s below dir.
func writeDir(t *testing.T, dir string, s spec) { testtree.Write(t, dir, s) }

// readDir reads the tree below dir, every directory listed.
func readDir(t *testing.T, dir string) spec {
	t.Helper()
	out := spec{}
	err := filepath.WalkDir(dir, func(name string, d os.DirEntry, err error) error {
		if err != nil || name == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, name)
		p := filepath.ToSlash(rel)
		st, err := os.Lstat(name)
		if err != nil {
			return err
		}
		switch {
		case st.IsDir():
			out[p] = item{Dir: true}
		case st.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(name)
			out[p] = item{Link: target}
			return err
		default:
			b, err := os.ReadFile(name)
			out[p] = item{Data: string(b), Exec: st.Mode()&0o100 != 0}
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameSpec fails t unless got equals want (with its directories).
func sameSpec(t *testing.T, got, want spec) {
	t.Helper()
	want = withDirs(want)
	var diffs []string
	for p, w := range want {
		if g, ok := got[p]; !ok || g != w {
			diffs = append(diffs, p)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			diffs = append(diffs, p)
		}
	}
	slices.Sort(diffs)
	for _, p := range diffs {
		t.Errorf("%s: got %+v, want %+v", p, got[p], want[p])
	}
}
