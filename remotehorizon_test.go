package casckpt_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/s3test"
)

// testHorizon is the gc horizon of the tests that need one.
const testHorizon = 3 * time.Second

// openHorizon is openGC with the gc horizon set to testHorizon.
func openHorizon(t *testing.T, srv *s3test.Server, url string) *casckpt.Store {
	t.Helper()
	s, err := casckpt.OpenURL(context.Background(), url, casckpt.Options{S3: s3Server(srv), CacheDir: t.TempDir(), GCGrace: testGrace, GCHorizon: testHorizon})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { checkVerifies(t, s) })
	return s
}

// TestS3CacheBehindHorizonRebuilds: gc removes deleted lists older than
// the horizon into horizon generations, and the older generations later.
// A cache left behind since before them (it still locates the files of
// its snapshot in a pack gc deleted, and never saw the deleted list) finds
// a generation missing, rebuilds, and its next snapshot of the same files
// stores them again instead of naming the deleted pack: the store
// verifies clean and the snapshot restores byte-exact from a new cache.
func TestS3CacheBehindHorizonRebuilds(t *testing.T) {
	srv := s3test.Start(t)
	url := s3URL(srv)
	ctx := context.Background()
	prefix := strings.TrimPrefix(url, "s3://"+srv.Bucket+"/") + "/"
	behind, other, collector := openHorizon(t, srv, url), openHorizon(t, srv, url), openHorizon(t, srv, url)
	dirL, dirA := t.TempDir(), t.TempDir()
	files := writeFiles(t, dirL, "left", 3)
	s0, err := behind.Snapshot(ctx, dirL, casckpt.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dirA, "other", 2)
	s1, err := other.Snapshot(ctx, dirA, casckpt.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gc := func() {
		t.Helper()
		if _, err := collector.GC(ctx); err != nil {
			t.Fatal(err)
		}
	}
	forget := func(dir string, id casckpt.ID) {
		t.Helper()
		if _, err := other.Forget(ctx, dir, casckpt.Ref(id.String())); err != nil {
			t.Fatal(err)
		}
	}
	forget(dirL, s0.ID)
	gc() // lists S0's pack
	time.Sleep(testGrace + time.Second)
	gc() // deletes it, after the first deleted list
	forget(dirA, s1.ID)
	gc() // lists S1's pack
	time.Sleep(testHorizon + time.Second)
	gc() // deletes it (second deleted list); the first goes into horizon generation 1
	time.Sleep(testHorizon + time.Second)
	gc() // the second goes into generation 2; generation 1 is removed
	if keys := keysUnder(t, srv, prefix+"dropped/packs/"); !slices.Equal(keys, []string{prefix + "dropped/packs/horizon/00000000000000000002"}) {
		t.Fatalf("gc's lists %v, want only horizon generation 2", keys)
	}

	res, err := behind.Snapshot(ctx, dirL, casckpt.SnapshotOptions{})
	if err != nil || !res.Created || res.Stored.Objects < len(files) {
		t.Fatalf("snapshot of the cache behind the horizon: %+v %v (it must store its files again)", res, err)
	}
	fresh := openHorizon(t, srv, url)
	verifyClean(t, fresh)
	os.RemoveAll(dirL)
	os.MkdirAll(dirL, 0o755)
	restoresExactly(t, fresh, dirL, res.ID, files)
}
