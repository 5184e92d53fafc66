package scan

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/casckpt/casckpt/cas/castest"
	"github.com/casckpt/casckpt/internal/statcache"
	"github.com/casckpt/casckpt/internal/testtree"
	"github.com/casckpt/casckpt/manifest"
)

// TestDefaultExcludesYield: a .gitignore negation brings a default-excluded
// directory back where that .gitignore applies; the git index of the
// repository that holds the project (here its parent's) brings back the
// directories it tracks files in; ExcludedByDefault counts what the list
// alone left out, not what a .gitignore ignored.
func TestDefaultExcludesYield(t *testing.T) {
	index, err := os.ReadFile(filepath.Join("..", "gitindex", "testdata", "index-v4.bin"))
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	testtree.Write(t, repo, testtree.Tree{
		".git/index":         {Data: string(index)}, // tracks go/build/build.go, among others
		"go/build/build.go":  {Data: "tracked"},
		"go/build/new.go":    {Data: "untracked, in a tracked directory"},
		"go/dist/d.go":       {Data: "untracked: dist/ is tracked at the top, not here"},
		"go/out/o.txt":       {Data: "excluded by the list"},
		"go/sub/.gitignore":  {Data: "!out/\ndist/\n"},
		"go/sub/out/o.txt":   {Data: "negated"},
		"go/sub/dist/d.go":   {Data: "ignored by the .gitignore: not counted"},
		"go/node_modules/x":  {Data: "excluded by the list"},
		"go/x.log":           {Data: "excluded by the list"},
		"go/sub/build/b.txt": {Data: "excluded by the list"},
	})
	paths, res := captured(t, filepath.Join(repo, "go"), Options{})
	want := []string{"build/", "build/build.go", "build/new.go", "sub/", "sub/.gitignore", "sub/out/", "sub/out/o.txt"}
	if !slices.Equal(paths, want) {
		t.Fatalf("captured %q\nwant %q", paths, want)
	}
	if res.ExcludedByDefault != 5 { // dist, out, node_modules, x.log, sub/build
		t.Fatalf("ExcludedByDefault %d, want 5 (excluded %q)", res.ExcludedByDefault, res.Excluded)
	}
	if len(res.Warnings) != 0 {
		t.Fatalf("warnings %q", res.Warnings)
	}
}

// TestUnreadableAcrossCachedScans: a file or directory that cannot be read
// is a KindUnreadable entry of the tree, in Unreadable and Excluded, scan
// after scan with the stat cache; once readable it is captured again, and
// the tree is the one from before.
func TestUnreadableAcrossCachedScans(t *testing.T) {
	if !testtree.AsUnprivileged(t) {
		return
	}
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{"ok": {Data: "x"}, "secret": {Data: "s"}, "locked/x": {Data: "x"}})
	defer func(real func() time.Time) { now = real }(now)
	now = func() time.Time { return time.Now().Add(time.Hour) }
	m := castest.NewMemory()
	cache := map[string]statcache.Dir{}
	scanWith := cachedScans(t, dir, m, cache)
	readable := scanWith()
	secret, locked := filepath.Join(dir, "secret"), filepath.Join(dir, "locked")
	os.Chmod(secret, 0)
	os.Chmod(locked, 0)
	defer os.Chmod(locked, 0o755)
	for i := range 2 {
		r := scanWith()
		if want := []string{"locked", "secret"}; !slices.Equal(r.Unreadable, want) || !slices.Equal(r.Excluded, want) || r.Files != 1 {
			t.Fatalf("scan %d: unreadable %q, excluded %q, %d files", i, r.Unreadable, r.Excluded, r.Files)
		}
		tree, err := manifest.Load(context.Background(), m, r.Root)
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, e := range tree.Entries {
			kinds = append(kinds, e.Name+":"+e.Kind.String())
		}
		if want := []string{"locked:unreadable", "ok:file", "secret:unreadable"}; !slices.Equal(kinds, want) {
			t.Fatalf("scan %d: tree %q, want %q", i, kinds, want)
		}
	}
	os.Chmod(secret, 0o644)
	os.Chmod(locked, 0o755)
	if again := scanWith(); again.Root != readable.Root || len(again.Unreadable) != 0 {
		t.Fatalf("readable again: same tree %v, unreadable %q", again.Root == readable.Root, again.Unreadable)
	}
}
