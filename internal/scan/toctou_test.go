package scan

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/casckpt/casckpt/cas/castest"
	"github.com/casckpt/casckpt/internal/testtree"
	"github.com/casckpt/casckpt/manifest"
)

// setHook runs fn once, the first time the scan reaches point at rel.
func setHook(t *testing.T, point, rel string, fn func()) {
	t.Helper()
	var once sync.Once
	testHook = func(p, r string) {
		if p == point && r == rel {
			once.Do(fn)
		}
	}
	t.Cleanup(func() { testHook = nil })
}

// scanContents scans dir and returns every captured file's content by path.
func scanContents(t *testing.T, dir string, opts Options) (map[string]string, Result) {
	t.Helper()
	ctx := context.Background()
	m := castest.NewMemory()
	res, err := Scan(ctx, dir, m, opts)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	err = manifest.Walk(ctx, m, res.Root, func(p string, e manifest.Entry) error {
		if e.Kind == manifest.KindFile {
			b, err := manifest.ReadFile(ctx, m, e)
			if err != nil {
				return err
			}
			got[p] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, res
}

// swapForLink replaces the directory dir/rel with a symlink to target.
func swapForLink(t *testing.T, dir, rel, target string) {
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.Rename(p, p+".moved"); err != nil {
		t.Error(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Error(err)
	}
}

const outsideData = "OUTSIDE: must never be captured"

func assertNothingFromOutside(t *testing.T, got map[string]string, res Result, left string) {
	t.Helper()
	for p, data := range got {
		if strings.Contains(data, "OUTSIDE") {
			t.Fatalf("%s captured the outside file's bytes: %q", p, data)
		}
	}
	if _, ok := got[left]; ok {
		t.Fatalf("%s captured; want it left out", left)
	}
	if !slices.Contains(res.Excluded, left) {
		t.Fatalf("%s not in Excluded %q: a restore could delete it", left, res.Excluded)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.HasPrefix(w, left+":") }) {
		t.Fatalf("no warning about %s: %q", left, res.Warnings)
	}
}

// TestReadNeverFollowsADirectorySwappedForALink swaps a directory for a link
// to outside the project after the walk listed it and before its file is
// read: the outside file is never read.
func TestReadNeverFollowsADirectorySwappedForALink(t *testing.T) {
	bothResolvers(t, func(t *testing.T) {
		base := t.TempDir()
		dir, outside := filepath.Join(base, "project"), filepath.Join(base, "outside")
		testtree.Write(t, dir, testtree.Tree{"sub/a.txt": {Data: "inside"}, "b.txt": {Data: "b"}})
		testtree.Write(t, outside, testtree.Tree{"a.txt": {Data: outsideData}})
		setHook(t, "open", "sub/a.txt", func() { swapForLink(t, dir, "sub", outside) })
		got, res := scanContents(t, dir, Options{})
		assertNothingFromOutside(t, got, res, "sub/a.txt")
		if got["b.txt"] != "b" || res.Files != 1 || res.Bytes != 1 {
			t.Fatalf("captured %q, %d files of %d bytes; want b.txt alone", got, res.Files, res.Bytes)
		}
	})
}

// TestWalkNeverFollowsADirectorySwappedForALink swaps a directory for a link
// to outside after the walk listed it and before it descends below it.
func TestWalkNeverFollowsADirectorySwappedForALink(t *testing.T) {
	bothResolvers(t, func(t *testing.T) {
		base := t.TempDir()
		dir, outside := filepath.Join(base, "project"), filepath.Join(base, "outside")
		testtree.Write(t, dir, testtree.Tree{"sub/deep/a.txt": {Data: "inside"}})
		testtree.Write(t, outside, testtree.Tree{"deep/a.txt": {Data: outsideData}})
		setHook(t, "opendir", "sub/deep", func() { swapForLink(t, dir, "sub", outside) })
		got, res := scanContents(t, dir, Options{})
		assertNothingFromOutside(t, got, res, "sub/deep")
	})
}

// TestFileReplacedAfterTheWalkIsReadAgain replaces a file by another (an
// editor's atomic save) between the walk and the read: the new file, which
// is in the project, is captured, with a warning and an untrusted stamp.
func TestFileReplacedAfterTheWalkIsReadAgain(t *testing.T) {
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{"a.txt": {Data: "old"}, "new.tmp": {Data: "new content"}})
	setHook(t, "open", "a.txt", func() {
		if err := os.Rename(filepath.Join(dir, "new.tmp"), filepath.Join(dir, "a.txt")); err != nil {
			t.Error(err)
		}
	})
	got, res := scanContents(t, dir, Options{})
	if got["a.txt"] != "new content" {
		t.Fatalf("captured %q", got)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.HasPrefix(w, "a.txt: changed") }) {
		t.Fatalf("no warning that a.txt changed: %q", res.Warnings)
	}
}

// TestFileGrowingPastTheLimitIsLeftOut grows a file past the size limit
// after the walk measured it: before it is opened, and while it is read,
// in one chunk or chunked. It is left out, reported, and not counted.
func TestFileGrowingPastTheLimitIsLeftOut(t *testing.T) {
	const limit = 1 << 20
	for _, tc := range []struct {
		name, point  string
		size, growTo int64
	}{
		{"before-open/one-chunk", "open", 1000, 3 << 20},
		{"while-read/one-chunk", "read", 1000, 3 << 20},
		{"while-read/chunked", "read", 512 << 10, 3 << 20},
		{"while-read/one-chunk-under-a-small-limit", "read", 1000, 200 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limit := int64(limit)
			if tc.growTo < limit {
				limit = 100 << 10
			}
			dir := t.TempDir()
			testtree.Write(t, dir, testtree.Tree{"ok.txt": {Data: "ok"}})
			p := filepath.Join(dir, "grows.bin")
			if err := os.WriteFile(p, []byte(strings.Repeat("g", int(tc.size))), 0o644); err != nil {
				t.Fatal(err)
			}
			setHook(t, tc.point, "grows.bin", func() {
				if err := os.Truncate(p, tc.growTo); err != nil {
					t.Error(err)
				}
			})
			got, res := scanContents(t, dir, Options{MaxFileSize: limit})
			if _, ok := got["grows.bin"]; ok {
				t.Fatalf("captured %d bytes of a file grown past the %d-byte limit", len(got["grows.bin"]), limit)
			}
			if res.Files != 1 || res.Bytes != 2 {
				t.Fatalf("result counts %d files, %d bytes; want ok.txt alone (1, 2)", res.Files, res.Bytes)
			}
			if !slices.Contains(res.Excluded, "grows.bin") {
				t.Fatalf("grows.bin not in Excluded %q: a restore could delete it", res.Excluded)
			}
			if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.HasPrefix(w, "grows.bin:") }) {
				t.Fatalf("no warning about grows.bin: %q", res.Warnings)
			}
		})
	}
}

// TestFileGoneAfterTheWalkIsNotUnreadable removes a file between the walk
// and the read: it is gone, so the tree lacks it (a later diff shows it
// deleted), and it is not reported unreadable.
func TestFileGoneAfterTheWalkIsNotUnreadable(t *testing.T) {
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{"a.txt": {Data: "a"}, "b.txt": {Data: "b"}})
	setHook(t, "open", "a.txt", func() {
		if err := os.Remove(filepath.Join(dir, "a.txt")); err != nil {
			t.Error(err)
		}
	})
	got, res := scanContents(t, dir, Options{})
	if len(got) != 1 || got["b.txt"] != "b" || len(res.Unreadable) != 0 || res.Files != 1 {
		t.Fatalf("captured %q, unreadable %q, %d files; want b.txt alone and nothing unreadable", got, res.Unreadable, res.Files)
	}
}

// TestDirectoryGoneAfterTheWalkIsNotUnreadable removes a directory after
// its parent listed it and before it is opened: it is gone, not unreadable.
func TestDirectoryGoneAfterTheWalkIsNotUnreadable(t *testing.T) {
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{"sub/a.txt": {Data: "a"}, "b.txt": {Data: "b"}})
	setHook(t, "opendir", "sub", func() {
		if err := os.RemoveAll(filepath.Join(dir, "sub")); err != nil {
			t.Error(err)
		}
	})
	got, res := scanContents(t, dir, Options{})
	if len(got) != 1 || len(res.Unreadable) != 0 {
		t.Fatalf("captured %q, unreadable %q; want b.txt alone and nothing unreadable", got, res.Unreadable)
	}
}
