package casckpt_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
)

// TestS3CacheBehindHorizonRebuilds: gc removes deleted lists older than
// the horizon into horizon generations, and the older generations later.
// A cache left behind since before them (it still locates the files of
// its snapshot in a pack gc deleted, and never saw the deleted list) finds
// a generation missing, rebuilds, and its next snapshot of the same files
// stores them again instead of naming the deleted pack: the store
// verifies clean and the snapshot restores byte-exact from a new cache.
// The bucket is in memory: the test advances its clock past the grace
// period and the horizon.
func TestS3CacheBehindHorizonRebuilds(t *testing.T) {
	m := newMemBucket()
	ctx := context.Background()
	behind, other, collector := m.open(t), m.open(t), m.open(t)
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
	m.Advance(memGrace + time.Second)
	gc() // deletes it, after the first deleted list
	forget(dirA, s1.ID)
	gc() // lists S1's pack
	m.Advance(memHorizon + time.Second)
	gc() // deletes it (second deleted list); the first goes into horizon generation 1
	m.Advance(memHorizon + time.Second)
	gc() // the second goes into generation 2; generation 1 is removed
	if keys := m.Keys("dropped/packs/"); !slices.Equal(keys, []string{"dropped/packs/horizon/00000000000000000002"}) {
		t.Fatalf("gc's lists %v, want only horizon generation 2", keys)
	}

	res, err := behind.Snapshot(ctx, dirL, casckpt.SnapshotOptions{})
	if err != nil || !res.Created || res.Stored.Objects < len(files) {
		t.Fatalf("snapshot of the cache behind the horizon: %+v %v (it must store its files again)", res, err)
	}
	fresh := m.open(t)
	verifyClean(t, fresh)
	os.RemoveAll(dirL)
	os.MkdirAll(dirL, 0o755)
	restoresExactly(t, fresh, dirL, res.ID, files)
}
