package restorer

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/castest"
	"github.com/casckpt/casckpt/manifest"
)

// item is one entry of a tree given as data: a file (Data, Exec), a link
// (Link) or a directory (Dir).
type item struct {
	Data string
	Exec bool
	Link string
	Dir  bool
}

// spec is a tree as data: slash-separated paths to entries. Directories
// above a path are implied; withDirs lists them.
type spec map[string]item

// withDirs returns s with every directory above its paths listed.
func withDirs(s spec) spec {
	out := spec{}
	for p, it := range s {
		out[p] = it
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			out[d] = item{Dir: true}
		}
	}
	return out
}

// plus returns the union of a and b.
func plus(a, b spec) spec {
	out := spec{}
	for p, it := range a {
		out[p] = it
	}
	for p, it := range b {
		out[p] = it
	}
	return out
}

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
func writeDir(t *testing.T, dir string, s spec) {
	t.Helper()
	w := withDirs(s)
	paths := make([]string, 0, len(w))
	for p := range w {
		paths = append(paths, p)
	}
	sort.Strings(paths) // parents first
	for _, p := range paths {
		it, name := w[p], filepath.Join(dir, filepath.FromSlash(p))
		var err error
		switch {
		case it.Dir:
			err = os.Mkdir(name, 0o755)
		case it.Link != "":
			err = os.Symlink(it.Link, name)
		default:
			perm := os.FileMode(0o644)
			if it.Exec {
				perm = 0o755
			}
			err = os.WriteFile(name, []byte(it.Data), perm)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

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
