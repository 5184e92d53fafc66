package scan

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/casckpt/casckpt/cas/castest"
	"github.com/casckpt/casckpt/internal/statcache"
	"github.com/casckpt/casckpt/internal/testtree"
)

// On a local file system with nanosecond times a scan trusts a file
// changed more than statcache.FineWindow before it: the next scan does not
// read it again, and still reads it once it is edited.
func TestFineTimesTrustFilesPastTheFineWindow(t *testing.T) {
	dir := t.TempDir()
	top, _, err := openRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	fine := fineTimes(top)
	top.close()
	if !fine {
		t.Skip("the temporary directory is not on a file system known to keep nanosecond times")
	}
	testtree.Write(t, dir, testtree.Tree{"a": {Data: "one"}, "b": {Data: "two"}})
	// The scans start as if FineWindow and a little more had passed since
	// the writes, but much less than statcache.RacyWindow.
	defer SetClock(func() time.Time { return time.Now().Add(statcache.FineWindow + 200*time.Millisecond) })()
	m := castest.NewMemory()
	scan := func(cache map[string]statcache.Dir) Result {
		t.Helper()
		res, err := Scan(context.Background(), dir, m, Options{Cache: cache, Trees: m})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := scan(nil)
	second := scan(first.CachePut)
	if second.Hashed != 0 || second.Root != first.Root {
		t.Fatalf("files changed past the fine window were read again: hashed %d", second.Hashed)
	}
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("three"), 0o644); err != nil {
		t.Fatal(err)
	}
	for d, rec := range second.CachePut { // the cache as the store keeps it
		first.CachePut[d] = rec
	}
	if third := scan(first.CachePut); third.Hashed != 1 || third.Root == first.Root {
		t.Fatalf("an edit after a trusted scan: hashed %d, root changed %v", third.Hashed, third.Root != first.Root)
	}
}

// tmpfs (/dev/shm) is known to keep nanosecond times; procfs is not.
func TestFineTimesKnowsTheFileSystems(t *testing.T) {
	for _, tc := range []struct {
		path string
		want bool
	}{{"/dev/shm", true}, {"/proc", false}} {
		if _, err := os.Stat(tc.path); err != nil {
			t.Skipf("%s: %v", tc.path, err)
		}
		top, _, err := openRoot(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fineTimes(top); got != tc.want {
			t.Errorf("fineTimes(%s) = %v, want %v", tc.path, got, tc.want)
		}
		top.close()
	}
}
