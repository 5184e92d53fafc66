package testtree

import (
	"archive/tar"
	"io"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Entry describes one path of a tree. Exactly one of the kinds applies:
// Dir, Link (a symlink to Link) or a regular file with Data.
type Entry struct {
	Data string
	Exec bool
	Link string
	Dir  bool
}

// Tree maps slash-separated paths to entries. Parent directories are
// implied.
type Tree map[string]Entry

// Write creates t under root.
func Write(tb testing.TB, root string, t Tree) {
	tb.Helper()
	paths := make([]string, 0, len(t))
	for p := range t {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		e := t[p]
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			tb.Fatal(err)
		}
		var err error
		switch {
		case e.Dir:
			err = os.MkdirAll(full, 0o755)
		case e.Link != "":
			err = os.Symlink(e.Link, full)
		default:
			mode := os.FileMode(0o644)
			if e.Exec {
				mode = 0o755
			}
			err = os.WriteFile(full, []byte(e.Data), mode)
			if err == nil {
				err = os.Chmod(full, mode)
			}
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// Read returns the tree under root, every directory listed (so empty ones
// are seen), skipping the names in skip wherever they occur.
func Read(tb testing.TB, root string, skip ...string) Tree {
	tb.Helper()
	t := Tree{}
	err := filepath.WalkDir(root, func(full string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if full == root {
			return nil
		}
		for _, s := range skip {
			if d.Name() == s {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		rel, _ := filepath.Rel(root, full)
		rel = filepath.ToSlash(rel)
		switch {
		case d.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(full)
			if err != nil {
				return err
			}
			t[rel] = Entry{Link: target}
		case d.IsDir():
			t[rel] = Entry{Dir: true}
		default:
			b, err := os.ReadFile(full)
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			t[rel] = Entry{Data: string(b), Exec: info.Mode()&0o100 != 0}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

// Equal reports the first difference between two trees, or "".
func Equal(want, got Tree) string {
	for p, w := range want {
		g, ok := got[p]
		if !ok {
			return "missing " + p
		}
		if w != g {
			return "differs at " + p
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			return "unexpected " + p
		}
	}
	return ""
}

// ReadTar returns the tree a tar archive holds, in the same form as Read.
func ReadTar(tb testing.TB, r io.Reader) Tree {
	tb.Helper()
	t := Tree{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return t
		}
		if err != nil {
			tb.Fatal(err)
		}
		name := strings.TrimSuffix(h.Name, "/")
		switch h.Typeflag {
		case tar.TypeDir:
			t[name] = Entry{Dir: true}
		case tar.TypeSymlink:
			t[name] = Entry{Link: h.Linkname}
		default:
			b, err := io.ReadAll(tr)
			if err != nil {
				tb.Fatal(err)
			}
			t[name] = Entry{Data: string(b), Exec: h.Mode&0o100 != 0}
		}
	}
}

// WithDirs returns t with the directories its paths imply, as Read and
// ReadTar list them.
func WithDirs(t Tree) Tree {
	out := Tree{}
	for p, e := range t {
		out[p] = e
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			out[d] = Entry{Dir: true}
		}
	}
	return out
}

// Edit returns a copy of t with changes applied and the paths in remove
// removed.
func Edit(t Tree, changes Tree, remove ...string) Tree {
	out := Tree{}
	for p, e := range t {
		out[p] = e
	}
	for p, e := range changes {
		out[p] = e
	}
	for _, p := range remove {
		delete(out, p)
	}
	return out
}

// FlipToLink starts an attacker that turns directory dir into a symbolic
// link to outside and back again and again, holding each state for pause,
// until the returned stop is called (which waits for it to end with dir a
// directory again). Tests run it beside an operation that must never read
// or write through the link.
func FlipToLink(dir, outside string, pause time.Duration) (stop func()) {
	var stopping atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stopping.Load() {
			os.Rename(dir, dir+".real")
			os.Symlink(outside, dir)
			time.Sleep(pause)
			os.Remove(dir)
			os.Rename(dir+".real", dir)
			time.Sleep(pause)
		}
	}()
	return func() { stopping.Store(true); <-done }
}

// EditLines makes one or two random line edits to text (whose lines all
// end in a newline): each inserts a line made by newLine, deletes a line
// or replaces one with a line made by newLine.
func EditLines(r *rand.Rand, text string, newLine func() string) string {
	lines := strings.SplitAfter(text, "\n")
	lines = lines[:len(lines)-1]
	for range 1 + r.IntN(2) {
		i := r.IntN(len(lines) + 1)
		switch r.IntN(3) {
		case 0:
			lines = slices.Insert(lines, i, newLine())
		case 1:
			if i < len(lines) {
				lines = slices.Delete(lines, i, i+1)
			}
		default:
			if i < len(lines) {
				lines[i] = newLine()
			}
		}
	}
	return strings.Join(lines, "")
}
