package scan

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/casckpt/casckpt/cas/castest"
	"github.com/casckpt/casckpt/internal/statcache"
	"github.com/casckpt/casckpt/internal/testtree"
)

// filesIn adds n files named f0, f1... under dir to t.
func filesIn(t testtree.Tree, dir string, n int) {
	for i := range n {
		t[fmt.Sprintf("%s/f%d", dir, i)] = testtree.Entry{Data: "x"}
	}
}

// withIndex adds internal/gitindex's testdata index to t as .git/index: it
// tracks cmd/dist/main.go, dist/d.go and build/sub/x.go, among others.
func withIndex(t *testing.T, tree testtree.Tree) {
	b, err := os.ReadFile(filepath.Join("..", "gitindex", "testdata", "index-v4.bin"))
	if err != nil {
		t.Fatal(err)
	}
	tree[".git/index"] = testtree.Entry{Data: string(b)}
}

// TestExcludeOption: Options.Exclude patterns exclude in any directory
// (or, with a slash inside, from the root), yield to a .gitignore
// negation and to the git index as the default list does, and are not
// counted in ExcludedByDefault. As in git, what a directory pattern
// matches below a directory the index keeps is excluded unless tracked.
func TestExcludeOption(t *testing.T) {
	dir := t.TempDir()
	tree := testtree.Tree{
		"main.go": {Data: "x"}, ".tox/py/x": {Data: "x"}, "a/.tox/y": {Data: "y"},
		"keep/.gitignore": {Data: "!.tox/\n"}, "keep/.tox/z": {Data: "negated"},
		"cmd/dist/main.go": {Data: "tracked"}, "cmd/dist/new.go": {Data: "untracked"}, "cmd/other/o.go": {Data: "o"},
		"docs/gen/g.html": {Data: "g"}, "x/docs/gen/kept": {Data: "anchored pattern: kept"},
		"node_modules/m.js": {Data: "m"},
	}
	withIndex(t, tree)
	testtree.Write(t, dir, tree)
	paths, res := captured(t, dir, Options{Exclude: []string{".tox/", "cmd/", "docs/gen/"}})
	want := []string{"a/", "cmd/", "cmd/dist/", "cmd/dist/main.go", "docs/",
		"keep/", "keep/.gitignore", "keep/.tox/", "keep/.tox/z", "main.go", "x/", "x/docs/", "x/docs/gen/", "x/docs/gen/kept"}
	if !slices.Equal(paths, want) {
		t.Fatalf("captured %q\nwant %q", paths, want)
	}
	if want := []string{".git", ".tox", "a/.tox", "cmd/dist/new.go", "cmd/other", "docs/gen", "node_modules"}; !slices.Equal(res.Excluded, want) || res.ExcludedByDefault != 1 {
		t.Fatalf("excluded %q (%d by default), want %q (1 by default)", res.Excluded, res.ExcludedByDefault, want)
	}
}

// TestMaxDirFiles: a directory of MaxDirFiles files or more (counted below
// it, after the other exclusions) that the git index tracks nothing in is
// excluded whole, reported once, outermost; 199 files are kept, as is a
// directory holding a tracked file; what was excluded inside it is no
// longer reported, nor counted by default.
func TestMaxDirFiles(t *testing.T) {
	dir := t.TempDir()
	tree := testtree.Tree{"main.go": {Data: "x"}, "big/app.log": {Data: "default-excluded inside"}, "cmd/dist/main.go": {Data: "tracked"}}
	filesIn(tree, "big", 200)
	filesIn(tree, "small", 199)
	filesIn(tree, "nest/a", 120)  // nest holds 200 in all: excluded whole
	filesIn(tree, "nest/b/c", 80) //
	filesIn(tree, "cmd/dist", 250)
	filesIn(tree, "lean", 150)
	filesIn(tree, "lean/node_modules", 100) // excluded first: not counted
	withIndex(t, tree)
	testtree.Write(t, dir, tree)
	paths, res := captured(t, dir, Options{MaxDirFiles: 200})
	var dirs []string
	for _, p := range paths {
		if strings.HasSuffix(p, "/") {
			dirs = append(dirs, p)
		}
	}
	if want := []string{"cmd/", "cmd/dist/", "lean/", "small/"}; !slices.Equal(dirs, want) {
		t.Fatalf("captured directories %q, want %q", dirs, want)
	}
	if res.Files != 1+199+251+150 {
		t.Fatalf("captured %d files, want %d", res.Files, 1+199+251+150)
	}
	if want := []string{".git", "big", "lean/node_modules", "nest"}; !slices.Equal(res.Excluded, want) || res.ExcludedByDefault != 1 {
		t.Fatalf("excluded %q (%d by default), want %q (1 by default: lean/node_modules)", res.Excluded, res.ExcludedByDefault, want)
	}
	if _, err := Scan(t.Context(), dir, nil, Options{MaxDirFiles: 200, MaxFiles: 600}); err == nil || !strings.Contains(err.Error(), "more than 600") {
		t.Fatalf("601 files kept, MaxFiles 600: %v", err)
	}
	if paths, _ := captured(t, dir, Options{MaxDirFiles: 200, MaxFiles: 601}); len(paths) == 0 {
		t.Fatal("nothing captured")
	}
}

// TestMaxDirFilesWithStatCache: with the stat cache of scans taken
// without MaxDirFiles and with it, in turn, each scan's tree is the one a
// scan without the cache makes, and an unchanged tree is read no more.
func TestMaxDirFilesWithStatCache(t *testing.T) {
	dir := t.TempDir()
	tree := testtree.Tree{"main.go": {Data: "x"}}
	filesIn(tree, "big/sub", 5)
	testtree.Write(t, dir, tree)
	defer func(real func() time.Time) { now = real }(now)
	now = func() time.Time { return time.Now().Add(time.Hour) }
	m := castest.NewMemory()
	cache := map[string]statcache.Dir{}
	for i, limit := range []int{0, 5, 0, 5, 5} {
		_, fresh := captured(t, dir, Options{MaxDirFiles: limit})
		r, err := Scan(t.Context(), dir, m, Options{MaxDirFiles: limit, Cache: cache, Trees: m})
		if err != nil {
			t.Fatal(err)
		}
		for d, rec := range r.CachePut {
			cache[d] = rec
		}
		for _, d := range r.CacheRemove {
			delete(cache, d)
		}
		if r.Root != fresh.Root {
			t.Fatalf("scan %d (MaxDirFiles %d): the cached scan's tree differs from a fresh one's", i, limit)
		}
		if i == 4 && r.Hashed != 0 {
			t.Fatalf("an unchanged tree: %d files read", r.Hashed)
		}
	}
}
