package gittest

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/manifest"
)

// Repo is a bare git repository written by hand.
type Repo struct {
	t *testing.T
	// Dir is the git directory.
	Dir string
}

// NewRepo makes a bare repository at dir: objects/, refs/heads/ and a HEAD
// naming the unborn branch master.
func NewRepo(t *testing.T, dir string) *Repo {
	t.Helper()
	for _, d := range []string{"objects", "refs/heads"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r := &Repo{t: t, Dir: dir}
	r.Write("HEAD", "ref: refs/heads/master\n")
	return r
}

// Name is the name git gives an object of type typ holding content.
func Name(typ string, content []byte) string {
	sum := sha1.Sum(append([]byte(fmt.Sprintf("%s %d\x00", typ, len(content))), content...))
	return hex.EncodeToString(sum[:])
}

// Put writes an object of type typ under its true name and returns it.
func (r *Repo) Put(typ string, content []byte) string {
	return r.PutAs(Name(typ, content), typ, content)
}

// PutAs writes an object of type typ under any name.
func (r *Repo) PutAs(name, typ string, content []byte) string {
	return r.PutRaw(name, io.MultiReader(strings.NewReader(fmt.Sprintf("%s %d\x00", typ, len(content))), bytes.NewReader(content)))
}

// PutRaw writes a loose object under any name: raw, its header and
// content, zlib-compressed as read, with no check (a header may lie).
func (r *Repo) PutRaw(name string, raw io.Reader) string {
	r.t.Helper()
	var b bytes.Buffer
	zw := zlib.NewWriter(&b)
	if _, err := io.Copy(zw, raw); err != nil {
		r.t.Fatal(err)
	}
	zw.Close()
	p := filepath.Join(r.Dir, "objects", name[:2], name[2:])
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, b.Bytes(), 0o444); err != nil {
		r.t.Fatal(err)
	}
	return name
}

// Write writes data to the file at rel, a path in the git directory,
// making its directory.
func (r *Repo) Write(rel, data string) {
	r.t.Helper()
	p := filepath.Join(r.Dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// Commit writes a commit of tree root, made at 1700000000 with message
// msg, and returns its name.
func (r *Repo) Commit(root, msg string) string {
	return r.Put("commit", []byte(fmt.Sprintf("tree %s\nauthor h <h@x> 1700000000 +0000\ncommitter h <h@x> 1700000000 +0000\n\n%s\n", root, msg)))
}

// Entry is a tree entry: mode (git's octal text), name and object name.
type Entry struct{ Mode, Name, Hash string }

// Tree encodes entries as git does (sorted by name; directories compare as
// if their names ended in '/', which the names tests use do not need).
// It panics on a hash that is not hex.
func Tree(entries ...Entry) []byte {
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	var b bytes.Buffer
	for _, e := range entries {
		b.Write(RawEntry(e.Mode, e.Name, e.Hash))
	}
	return b.Bytes()
}

// RawEntry encodes one tree entry as git does, with no check of its parts.
// It panics on a hash that is not hex.
func RawEntry(mode, name, hash string) []byte {
	h, err := hex.DecodeString(hash)
	if err != nil {
		panic(err)
	}
	return append([]byte(mode+" "+name+"\x00"), h...)
}

// NewStore opens an empty store and verifies it when the test ends.
func NewStore(t *testing.T) *casckpt.Store {
	t.Helper()
	s, err := casckpt.Open(filepath.Join(t.TempDir(), "store"), casckpt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		v, err := s.Verify(context.Background())
		if err != nil || len(v.Damaged) != 0 {
			t.Errorf("verify: %+v %v", v, err)
		}
	})
	return s
}

// File is a file ("file" or "exec", and its bytes) or a link ("symlink",
// and its target), as git holds it.
type File struct{ Kind, Data string }

// Snapshot reads snapshot id of project wd back as its files by path and
// its directories.
func Snapshot(t *testing.T, s *casckpt.Store, wd string, id cas.ID) (map[string]File, map[string]bool) {
	t.Helper()
	ctx := context.Background()
	entries, err := s.Ls(ctx, wd, casckpt.Ref(id.String()))
	if err != nil {
		t.Fatal(err)
	}
	files, dirs := map[string]File{}, map[string]bool{}
	for _, e := range entries {
		switch e.Entry.Kind {
		case manifest.KindDir:
			dirs[e.Path] = true
		case manifest.KindSymlink:
			files[e.Path] = File{Kind: "symlink", Data: e.Entry.Target}
		default:
			var b bytes.Buffer
			if err := s.Cat(ctx, wd, casckpt.Ref(id.String()), e.Path, &b); err != nil {
				t.Fatal(err)
			}
			kind := "file"
			if e.Entry.Exec {
				kind = "exec"
			}
			if int64(b.Len()) != e.Entry.Size {
				t.Errorf("%s: size %d, content %d bytes", e.Path, e.Entry.Size, b.Len())
			}
			files[e.Path] = File{Kind: kind, Data: b.String()}
		}
	}
	return files, dirs
}

// Only returns the one snapshot of project wd.
func Only(t *testing.T, s *casckpt.Store, wd string) cas.ID {
	t.Helper()
	list, err := s.List(context.Background(), wd, 0)
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %+v %v", list, err)
	}
	return list[0].ID
}
