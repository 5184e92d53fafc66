package scan

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/casckpt/casckpt/internal/osfs"
	"github.com/casckpt/casckpt/internal/statcache"
	"github.com/casckpt/casckpt/internal/testtree"
)

// TestCaptureTakesExcludedEntriesItIsAskedFor: Options.Capture captures an
// ignored file, a file over the size limit (whole) and, in an ignored
// directory it captures, only the entries it says yes to; it is never
// asked about what the rules keep, nor about the Skip list.
func TestCaptureTakesExcludedEntriesItIsAskedFor(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("x", 3000)
	testtree.Write(t, dir, testtree.Tree{
		".gitignore":      {Data: "*.secret\nnotes/\n"},
		"main.go":         {Data: "x"},
		"a.secret":        {Data: "captured"},
		"b.secret":        {Data: "not asked for"},
		"big.bin":         {Data: big},
		"notes/todo.md":   {Data: "captured"},
		"notes/other.md":  {Data: "left out"},
		"notes/deep/x.md": {Data: "left out"},
		".store/db":       {Data: "never"},
	})
	yes := map[string]bool{"a.secret": true, "big.bin": true, "notes": true, "notes/todo.md": true, ".store": true}
	var (
		mu    sync.Mutex
		asked []string
	)
	opts := Options{MaxFileSize: 1000, Skip: []string{filepath.Join(dir, ".store")}, KeepTree: true, // as a restore's
		Capture: func(rel string, isDir bool) bool {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, rel)
			return yes[rel] && isDir == (rel == "notes")
		}}
	paths, res := captured(t, dir, opts)
	want := []string{".gitignore", "a.secret", "big.bin", "main.go", "notes/", "notes/todo.md"}
	if !slices.Equal(paths, want) {
		t.Fatalf("captured %q, want %q", paths, want)
	}
	slices.Sort(asked)
	if wantAsked := []string{"a.secret", "b.secret", "big.bin", "notes", "notes/deep", "notes/other.md", "notes/todo.md"}; !slices.Equal(asked, wantAsked) {
		t.Fatalf("asked about %q, want %q", asked, wantAsked)
	}
	if wantEx := []string{".store", "b.secret", "notes/deep", "notes/other.md"}; !slices.Equal(res.Excluded, wantEx) {
		t.Fatalf("excluded %q, want %q", res.Excluded, wantEx)
	}
	if res.Bytes != int64(len(big)+2*len("captured")+len("x")+len("*.secret\nnotes/\n")) {
		t.Errorf("%d bytes captured", res.Bytes)
	}
	// Stamp is what lstat says of a captured file now, as a new scan
	// would stamp it; nothing for what was not captured.
	for _, p := range []string{"big.bin", "notes/todo.md", "main.go"} {
		st := lstat(t, filepath.Join(dir, p))
		got, ok := res.Stamp(p)
		if want := statcache.CurrentStamp(st.Size, st.Mtime, st.Ctime, st.Ino, st.Mode); !ok || got != want {
			t.Errorf("Stamp(%s) = %x %v, want %x", p, got, ok, want)
		}
	}
	for _, p := range []string{"b.secret", "notes", "notes/other.md", "missing", "main.go/x"} {
		if _, ok := res.Stamp(p); ok {
			t.Errorf("Stamp(%s) is set", p)
		}
	}
	// A save changes the stamp.
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("saved"), 0o644); err != nil {
		t.Fatal(err)
	}
	st := lstat(t, filepath.Join(dir, "main.go"))
	if got, _ := res.Stamp("main.go"); got == statcache.CurrentStamp(st.Size, st.Mtime, st.Ctime, st.Ino, st.Mode) {
		t.Error("a file saved after the scan has the stamp it had")
	}
}

// lstat is what os.Lstat says of p, as the scan's stamps read it.
func lstat(t *testing.T, p string) osfs.Stat {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := osfs.FromInfo(fi)
	if !ok {
		t.Fatalf("%s: no metadata", p)
	}
	return st
}
