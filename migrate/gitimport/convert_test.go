package gitimport

import (
	"context"
	"errors"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/migrate/gitimport/gittest"
)

// TestConverterOddEntries feeds the converter trees git's porcelain would
// not make, from an in-memory repository.
func TestConverterOddEntries(t *testing.T) {
	mem := memory.NewStorage()
	blob := func(data string) plumbing.Hash {
		o := mem.NewEncodedObject()
		o.SetType(plumbing.BlobObject)
		w, _ := o.Writer()
		w.Write([]byte(data))
		w.Close()
		h, err := mem.SetEncodedObject(o)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	tree := func(entries ...object.TreeEntry) plumbing.Hash {
		o := mem.NewEncodedObject()
		if err := (&object.Tree{Entries: entries}).Encode(o); err != nil {
			t.Fatal(err)
		}
		h, err := mem.SetEncodedObject(o)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	emptyDir := tree()
	onlyGitlink := tree(object.TreeEntry{Name: "s", Mode: filemode.Submodule, Hash: plumbing.NewHash(strings.Repeat("ab", 20))})
	sub := tree(object.TreeEntry{Name: "f", Mode: filemode.Regular, Hash: blob("in sub\n")})
	root := tree(
		object.TreeEntry{Name: "..", Mode: filemode.Regular, Hash: blob("dots")},
		object.TreeEntry{Name: ".GIT", Mode: filemode.Dir, Hash: sub},
		object.TreeEntry{Name: "a", Mode: filemode.Regular, Hash: blob("a\n")},
		object.TreeEntry{Name: "d", Mode: filemode.Dir, Hash: sub},
		object.TreeEntry{Name: "empty", Mode: filemode.Dir, Hash: emptyDir},
		object.TreeEntry{Name: "g", Mode: filemode.Dir, Hash: onlyGitlink},
		object.TreeEntry{Name: "old-exec", Mode: filemode.FileMode(0o100775), Hash: blob("#!/bin/sh\n")},
		object.TreeEntry{Name: "old-group", Mode: filemode.Deprecated, Hash: blob("664\n")},
		object.TreeEntry{Name: "weird", Mode: filemode.FileMode(0o070000), Hash: blob("?")},
		object.TreeEntry{Name: "zlink", Mode: filemode.Symlink, Hash: blob("a")},
	)
	store := gittest.NewStore(t)
	ctx := context.Background()
	var res treeResult
	wd := t.TempDir()
	_, err := store.Import(ctx, casckpt.ImportProject{Workdir: wd, Snapshots: []casckpt.ImportSnapshot{{Origin: "test",
		Build: func(ctx context.Context, put cas.Putter) (cas.ID, int64, int64, error) {
			var err error
			res, err = newConverter(&objectReader{st: mem}, put, 50_000, 10<<20).root(ctx, root)
			return res.id, res.files, res.bytes, err
		}}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.gitlinks != 2 || res.badNames != 2 || res.files != 5 {
		t.Errorf("result %+v, want 2 gitlinks (g/s, and weird as git reads it), 2 bad names (.GIT, ..), 5 files", res)
	}
	files, dirs := gittest.Snapshot(t, store, wd, gittest.Only(t, store, wd))
	want := map[string]gittest.File{"a": {Kind: "file", Data: "a\n"}, "d/f": {Kind: "file", Data: "in sub\n"}, "old-exec": {Kind: "exec", Data: "#!/bin/sh\n"},
		"old-group": {Kind: "file", Data: "664\n"}, "zlink": {Kind: "symlink", Data: "a"}}
	if !maps.Equal(files, want) || !slices.Equal(slices.Sorted(maps.Keys(dirs)), []string{"d"}) {
		t.Errorf("files %v dirs %v", files, slices.Sorted(maps.Keys(dirs)))
	}

	// A tree that is not there is the source's fault.
	_, err = store.Import(ctx, casckpt.ImportProject{Workdir: wd, Snapshots: []casckpt.ImportSnapshot{{Origin: "test2",
		Build: func(ctx context.Context, put cas.Putter) (cas.ID, int64, int64, error) {
			_, err := newConverter(&objectReader{st: mem}, put, 50_000, 10<<20).root(ctx, plumbing.NewHash(strings.Repeat("12", 20)))
			return cas.ID{}, 0, 0, err
		}}}})
	if se := (*sourceError)(nil); !errors.As(err, &se) {
		t.Errorf("missing tree: %v", err)
	}
}

func TestReadOnlyFSRefusesWrites(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644)
	st := openRepo(dir)
	defer closeRepo(st)
	fsys := st.Filesystem()
	if _, err := fsys.Create("new"); !errors.Is(err, errReadOnly) {
		t.Errorf("create: %v", err)
	}
	if _, err := fsys.OpenFile("f", os.O_RDWR, 0); !errors.Is(err, errReadOnly) {
		t.Errorf("open read-write: %v", err)
	}
	if err := fsys.MkdirAll("d", 0o755); !errors.Is(err, errReadOnly) {
		t.Errorf("mkdir: %v", err)
	}
	if err := fsys.Rename("f", "g"); !errors.Is(err, errReadOnly) {
		t.Errorf("rename: %v", err)
	}
	if err := fsys.Remove("f"); !errors.Is(err, errReadOnly) {
		t.Errorf("remove: %v", err)
	}
	f, err := fsys.Open("f")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("y")); err == nil {
		t.Error("a file opened for reading took a write")
	}
	f.Close()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || path.Base(entries[0].Name()) != "f" {
		t.Errorf("the directory holds %v", entries)
	}
}

func TestFirstLine(t *testing.T) {
	for _, c := range []struct{ msg, enc, want string }{
		{"subject\n\nbody", "", "subject"},
		{"\n\n  subject  \r\nmore", "", "subject"},
		{"", "", ""},
		{"caf\xe9", "ISO-8859-1", "café"},
		{"bad \xff byte", "", "bad \uFFFD byte"},
	} {
		if got := firstLine(c.msg, c.enc); got != c.want {
			t.Errorf("firstLine(%q, %q) = %q, want %q", c.msg, c.enc, got, c.want)
		}
	}
}
