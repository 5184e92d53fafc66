package scan

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/castest"
	"github.com/casckpt/casckpt/internal/statcache"
	"github.com/casckpt/casckpt/internal/testtree"
	"github.com/casckpt/casckpt/manifest"
)

// captured scans dir and returns the captured paths (dirs with a trailing
// slash) and the result.
func captured(t *testing.T, dir string, opts Options) ([]string, Result) {
	t.Helper()
	m := castest.NewMemory()
	res, err := Scan(context.Background(), dir, m, opts)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	err = manifest.Walk(context.Background(), m, res.Root, func(p string, e manifest.Entry) error {
		if e.Kind == manifest.KindDir {
			p += "/"
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths, res
}

func TestDefaultExcludes(t *testing.T) {
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{
		"main.go":                 {Data: "x"},
		".env":                    {Data: "SECRET=1"},
		".env.local":              {Data: "SECRET=2"},
		"node_modules/x/index.js": {Data: "x"},
		"pkg/build/out.txt":       {Data: "x"}, // build/ is a directory pattern
		"build":                   {Data: "a file named build is kept"},
		"app.log":                 {Data: "x"},
		"lib.so":                  {Data: "x"},
		"a.tar.gz":                {Data: "x"},
		".git/HEAD":               {Data: "x"},
		"sub/.git":                {Data: "gitdir: elsewhere"},
		"keep/.casckpt-1.tmp":     {Data: "crash leftover"},
		"keep/ok.txt":             {Data: "x"},
	})
	paths, res := captured(t, dir, Options{})
	want := []string{"build", "keep/", "keep/ok.txt", "main.go", "pkg/", "sub/"}
	if !slices.Equal(paths, want) {
		t.Fatalf("captured %q\nwant %q", paths, want)
	}
	if !slices.Equal(res.Leftovers, []string{"keep/.casckpt-1.tmp"}) {
		t.Fatalf("leftovers %q", res.Leftovers)
	}
	for _, ex := range []string{".env", ".env.local", "node_modules", "pkg/build", "app.log", ".git", "sub/.git"} {
		if !slices.Contains(res.Excluded, ex) {
			t.Errorf("excluded list lacks %s: %q", ex, res.Excluded)
		}
	}
}

// TestSkipIsOneAbsolutePath: an entry on the Skip list (the store's own
// directory inside the tree) is neither captured nor descended into, and
// is reported excluded; an entry of the same name elsewhere is captured.
func TestSkipIsOneAbsolutePath(t *testing.T) {
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{
		"main.go":           {Data: "x"},
		".store/casckpt.db": {Data: "the store's database"},
		"sub/.store/kept":   {Data: "a project's own directory of that name"},
	})
	paths, res := captured(t, dir, Options{Skip: []string{filepath.Join(dir, ".store")}})
	want := []string{"main.go", "sub/", "sub/.store/", "sub/.store/kept"}
	if !slices.Equal(paths, want) {
		t.Fatalf("captured %q\nwant %q", paths, want)
	}
	if !slices.Equal(res.Excluded, []string{".store"}) {
		t.Fatalf("excluded %q, want [.store]", res.Excluded)
	}
}

func TestGitignoreSemantics(t *testing.T) {
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{
		".gitignore":           {Data: "*.txt\n!keep.txt\n/anchored\ndironly/\ndoc/internal\n# comment\n"},
		"a.txt":                {Data: "x"},
		"keep.txt":             {Data: "x"},
		"anchored":             {Data: "x"},
		"sub/anchored":         {Data: "not anchored here"},
		"dironly/x":            {Data: "x"},
		"sub/dironly":          {Data: "a file, not matched by dironly/"},
		"doc/internal/x":       {Data: "x"},
		"sub/doc/internal/x":   {Data: "middle slash anchors to the root"},
		"nested/.gitignore":    {Data: "!again.txt\nlocal\n"},
		"nested/again.txt":     {Data: "re-included by the deeper file"},
		"nested/other.txt":     {Data: "x"},
		"nested/local":         {Data: "x"},
		"nested/deeper/local":  {Data: "pattern without slash matches at any depth"},
		"nested/deeper/ok.go":  {Data: "x"},
		"other/local":          {Data: "the nested file does not apply here"},
		"sub/doc/internal2/ok": {Data: "x"},
	})
	paths, _ := captured(t, dir, Options{})
	// doc/ stays, empty: directories are captured even when all they hold
	// is excluded.
	want := []string{
		".gitignore", "doc/", "keep.txt", "nested/", "nested/.gitignore", "nested/again.txt",
		"nested/deeper/", "nested/deeper/ok.go", "other/", "other/local", "sub/", "sub/anchored",
		"sub/dironly", "sub/doc/", "sub/doc/internal/", "sub/doc/internal/x", "sub/doc/internal2/",
		"sub/doc/internal2/ok",
	}
	if !slices.Equal(paths, want) {
		t.Fatalf("captured %q\nwant %q", paths, want)
	}
}

func TestUnreadableIsReportedNotFatal(t *testing.T) {
	if !testtree.AsUnprivileged(t) {
		return
	}
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{"ok": {Data: "x"}, "secret": {Data: "x"}, "locked/x": {Data: "x"}})
	os.Chmod(filepath.Join(dir, "secret"), 0)
	os.Chmod(filepath.Join(dir, "locked"), 0)
	defer os.Chmod(filepath.Join(dir, "locked"), 0o755)
	paths, res := captured(t, dir, Options{})
	if !slices.Equal(paths, []string{"ok"}) || len(res.Warnings) != 2 {
		t.Fatalf("captured %q, warnings %q", paths, res.Warnings)
	}
}

func TestDeepTree(t *testing.T) {
	dir := t.TempDir()
	p := dir
	for range 1000 {
		p = filepath.Join(p, "d")
	}
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(p, "leaf"), []byte("x"), 0o644)
	paths, _ := captured(t, dir, Options{})
	if len(paths) != 1001 || !strings.HasSuffix(paths[1000], "/leaf") {
		t.Fatalf("deep tree: %d paths", len(paths))
	}
}

// cachedScans returns a function that scans dir into m with the stat
// cache cache, and keeps the cache as the index keeps it.
func cachedScans(t *testing.T, dir string, m *castest.Memory, cache map[string]statcache.Dir) func() Result {
	return func() Result {
		t.Helper()
		r, err := Scan(context.Background(), dir, m, Options{Cache: cache, Trees: m})
		if err != nil {
			t.Fatal(err)
		}
		for d, rec := range r.CachePut {
			cache[d] = rec
		}
		for _, d := range r.CacheRemove {
			delete(cache, d)
		}
		return r
	}
}

func TestStatCacheSkipsUnchangedFiles(t *testing.T) {
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{"a": {Data: "a"}, "b": {Data: "b"}, "c/d": {Data: "d"}, "c/e/f": {Data: "f"}})
	// Scans an hour from now see every file as long settled.
	defer func(real func() time.Time) { now = real }(now)
	now = func() time.Time { return time.Now().Add(time.Hour) }
	m := castest.NewMemory()
	cache := map[string]statcache.Dir{} // kept as the index keeps it
	scanWith := cachedScans(t, dir, m, cache)
	first := scanWith()
	if first.Hashed != 4 || len(first.CachePut) != 3 {
		t.Fatalf("first scan hashed %d, recorded %d directories", first.Hashed, len(first.CachePut))
	}
	second := scanWith()
	if second.Hashed != 0 || second.Root != first.Root || len(second.CachePut) != 0 {
		t.Fatalf("unchanged tree: hashed %d, same root %v, %d records rewritten", second.Hashed, second.Root == first.Root, len(second.CachePut))
	}
	// An edit that keeps the size is seen (ctime and inode stamps).
	os.WriteFile(filepath.Join(dir, "c/d"), []byte("D"), 0o644)
	third := scanWith()
	if third.Hashed != 1 || third.Root == first.Root {
		t.Fatalf("edit not seen: hashed %d", third.Hashed)
	}
	// Only c's record and the root's change; c/e is reused untouched.
	if _, ok := third.CachePut["c/e"]; ok || len(third.CachePut) != 2 {
		t.Fatalf("records rewritten: %v", len(third.CachePut))
	}
	// A vouched-for file whose cached tree is gone is read instead.
	m.Delete(third.CachePut[""].Tree)
	os.Chmod(filepath.Join(dir, "b"), 0o600) // so the root is re-encoded
	fourth := scanWith()
	if fourth.Root != third.Root {
		t.Fatal("a missing cached tree changed the result")
	}
	// A damaged cache that names trees the store lacks: an unchanged
	// subtree (c/e) under a changed directory, and then the whole root.
	// The scan must never refer to a tree that is not stored.
	m.Delete(cache["c/e"].Tree)
	os.WriteFile(filepath.Join(dir, "c/d"), []byte("d2"), 0o644)
	damaged := scanWith()
	if err := manifest.Walk(context.Background(), m, damaged.Root, func(string, manifest.Entry) error { return nil }); err != nil {
		t.Fatalf("a scan over a damaged cache refers to a missing tree: %v", err)
	}
	m.Delete(damaged.Root)
	if again := scanWith(); again.Root != damaged.Root || again.Hashed == 0 {
		t.Fatalf("an unchanged tree whose cached root is gone: same root %v, hashed %d", again.Root == damaged.Root, again.Hashed)
	}
	if stored, _ := m.Has(damaged.Root); !stored {
		t.Fatal("the root the scan returned is not stored")
	}
	os.RemoveAll(filepath.Join(dir, "c"))
	fifth := scanWith()
	if !slices.Contains(fifth.CacheRemove, "c") || !slices.Contains(fifth.CacheRemove, "c/e") {
		t.Fatalf("deleted directories stay in the cache: %q", fifth.CacheRemove)
	}
}

func TestRacyFilesAreReadAgain(t *testing.T) {
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{"a": {Data: "one"}})
	m := castest.NewMemory()
	first, err := Scan(context.Background(), dir, m, Options{Trees: m})
	if err != nil {
		t.Fatal(err)
	}
	// Same size, same mtime second: only the racy rule can see this edit
	// when timestamps are coarse; here the file was just written, so its
	// stamp is untrusted and it is read again.
	os.WriteFile(filepath.Join(dir, "a"), []byte("two"), 0o644)
	second, err := Scan(context.Background(), dir, m, Options{Cache: first.CachePut, Trees: m})
	if err != nil || second.Hashed != 1 || second.Root == first.Root {
		t.Fatalf("racy edit missed: hashed %d, err %v", second.Hashed, err)
	}
}

// TestLargeFileIsChunked: a scan stores a file as manifest.PutFile does, so
// snapshots and migrated histories deduplicate.
func TestLargeFileIsChunked(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 3<<20)
	for i := range data {
		data[i] = byte(i * 7 % 251)
	}
	os.WriteFile(filepath.Join(dir, "big"), data, 0o644)
	m := castest.NewMemory()
	res, err := Scan(context.Background(), dir, m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := manifest.Lookup(context.Background(), m, res.Root, "big")
	if err != nil || len(e.Chunks) < 4 {
		t.Fatalf("3 MiB file in %d chunks: %v", len(e.Chunks), err)
	}
	got, err := manifest.ReadFile(context.Background(), m, e)
	if err != nil || string(got) != string(data) {
		t.Fatalf("content differs: %v", err)
	}
	want, err := manifest.PutFile(context.Background(), castest.NewMemory(), "big", bytes.NewReader(data), int64(len(data)), false)
	if err != nil || !slices.Equal(e.Chunks, want.Chunks) || e.Lines != want.Lines || e.Binary != want.Binary {
		t.Fatalf("scan stored %d chunks, PutFile %d (%v)", len(e.Chunks), len(want.Chunks), err)
	}
}

// failingPutter fails every store, as a full disk would.
type failingPutter struct{}

func (failingPutter) Put(context.Context, cas.Kind, []byte) (cas.ID, error) {
	return cas.ID{}, &os.PathError{Op: "write", Path: "pack", Err: syscall.ENOSPC}
}

func TestStoreFailureFailsTheScan(t *testing.T) {
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{"a": {Data: "content"}})
	_, err := Scan(context.Background(), dir, failingPutter{}, Options{})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a store that cannot write: %v; want the scan to fail, not leave the file out", err)
	}
}

// sharedErrPutter fails every store with one error value, as the pack
// writer's sticky error is.
type sharedErrPutter struct{ err *os.PathError }

func (p sharedErrPutter) Put(context.Context, cas.Kind, []byte) (cas.ID, error) {
	return cas.ID{}, p.err
}

// TestStoreErrorIsNotRewritten: a failure of the store reaches the caller
// as the store reported it, naming the pack, never rewritten in place with
// the path of the file being read (which, with the writer's one error
// shared by every hashing goroutine, was also a data race).
func TestStoreErrorIsNotRewritten(t *testing.T) {
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{"a": {Data: "one"}, "b": {Data: "two"}})
	shared := &os.PathError{Op: "write", Path: "/store/packs/x.pack", Err: syscall.EIO}
	_, err := Scan(context.Background(), dir, sharedErrPutter{shared}, Options{})
	if !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "/store/packs/x.pack") || shared.Path != "/store/packs/x.pack" {
		t.Fatalf("scan error %q; the store's error now names %q", err, shared.Path)
	}
}

func TestFilesChangingDuringTheScan(t *testing.T) {
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{"steady.txt": {Data: "steady"}})
	p := filepath.Join(dir, "growing.log.txt")
	os.WriteFile(p, nil, 0o644)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // grows and shrinks the file as fast as it can
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			os.WriteFile(p, []byte(strings.Repeat("x", i%400_000)), 0o644)
		}
	}()
	defer func() { close(stop); <-done }()
	m := castest.NewMemory()
	for range 20 {
		res, err := Scan(context.Background(), dir, m, Options{Trees: m})
		if err != nil {
			t.Fatalf("scan of a tree changing under it: %v", err)
		}
		e, err := manifest.Lookup(context.Background(), m, res.Root, "growing.log.txt")
		if err != nil {
			continue // it may be caught between truncate and write
		}
		got, err := manifest.ReadFile(context.Background(), m, e)
		if err != nil || int64(len(got)) != e.Size || strings.Trim(string(got), "x") != "" {
			t.Fatalf("captured %d bytes of a file of %d x's: %v", len(got), e.Size, err)
		}
	}
}
