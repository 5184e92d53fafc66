package casckpt

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/restorer"
	"github.com/casckpt/casckpt/repo"
	"github.com/casckpt/casckpt/repo/bucket"
)

// SeparateGCLeases gives every gc the test runs a lease key of its own
// (gc/lease-1, gc/lease-2, ...), so that gcs run at once as if the lease
// did not exist; the lease is restored when the test ends.
func SeparateGCLeases(t *testing.T) {
	var n atomic.Int64
	old := bucket.LeaseKey
	bucket.LeaseKey = func() string { return fmt.Sprintf("%s-%d", old(), n.Add(1)) }
	t.Cleanup(func() { bucket.LeaseKey = old })
}

// OnPlatform makes restores and undos fit their plans to p, as if the
// project's file system were p's, until the test ends.
func OnPlatform(t *testing.T, p restorer.Platform) {
	hostPlatform = func(string) restorer.Platform { return p }
	t.Cleanup(func() { hostPlatform = restorer.HostPlatform })
}

// OnClear makes Clear call fn between the removal of the lock file and
// that of the store's directory, until the test ends.
func OnClear(t *testing.T, fn func()) {
	clearHook = fn
	t.Cleanup(func() { clearHook = nil })
}

// OnProjectLockWait makes a restore or undo call fn when it finds its
// project's writer lock held, before it waits for it, until the test
// ends.
func OnProjectLockWait(t *testing.T, fn func()) {
	repo.LockWaitHook = func(path string) {
		if strings.HasPrefix(filepath.Base(path), "project-") {
			fn()
		}
	}
	t.Cleanup(func() { repo.LockWaitHook = nil })
}

// LongLived returns opts for a store on a bucket that counts its cache
// as up to date for d after each sync, as a long-lived process does
// (the command: a second): its reads within d do not sync again.
func LongLived(opts Options, d time.Duration) Options {
	opts.syncEvery = d
	return opts
}

// ObjectStore is what a store in a bucket needs of the bucket, for tests
// that wrap an in-memory one.
type ObjectStore = bucket.Objects

// OpenBucket opens the store at location, an s3:// URL, over bucket
// instead of the server opts.S3 names: in tests an in-memory bucket
// (internal/s3test/membucket) whose server clock the test sets. Its cache
// is under opts.CacheDir, as OpenURL's. It syncs at every use, as if each
// use were a command of its own: the test's wall clock barely moves.
func OpenBucket(location string, objects ObjectStore, opts Options) (*Store, error) {
	return openBucket(location, objects, opts)
}

// FoldNow folds the store's inline packs into a pack file, as a turn does
// once there are enough of them: for tests that damage or read pack files,
// or lose the database, which inline packs live in.
func FoldNow(t *testing.T, s *Store) {
	t.Helper()
	ss, err := s.begin(t.Context(), false, false)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.End()
	if err := ss.foldInline(t.Context()); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := ss.Read(func(v view) error { n, _ = v.Tx.InlineBytes(); return nil }); err != nil || n > 0 {
		t.Fatalf("after a fold %d inline packs are left (%v)", n, err)
	}
}

// FoldAfter makes a turn fold the inline packs once there are n of them,
// until the test ends.
func FoldAfter(t *testing.T, n int) {
	old := foldAfterPacks
	foldAfterPacks = n
	t.Cleanup(func() { foldAfterPacks = old })
}

// FilePacksOnly makes every turn write its packs as pack files, none
// inline, until the test ends: for tests of the pack files' layout (one
// pack file per snapshot).
func FilePacksOnly(t *testing.T) { InlineUpTo(t, 0) }

// InlineUpTo makes turns keep packs of up to n bytes inline, until the
// test ends.
func InlineUpTo(t *testing.T, n int64) {
	old := repo.InlineMax
	repo.InlineMax = n
	t.Cleanup(func() { repo.InlineMax = old })
}

// InlinePacks counts the inline packs in the records of s.
func InlinePacks(t *testing.T, s *Store) (n int) {
	t.Helper()
	if err := s.repo.DB().View(func(tx *index.Tx) error { n, _ = tx.InlineBytes(); return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// CommitAheadPast makes snapshots of more than objects objects commit
// them ahead of their record, objects per transaction, and their stat
// cache in transactions of about stamps entries, until the test ends.
func CommitAheadPast(t *testing.T, objects, stamps int) {
	oldObjects, oldStamps := batchObjects, batchStamps
	batchObjects, batchStamps = objects, stamps
	t.Cleanup(func() { batchObjects, batchStamps = oldObjects, oldStamps })
}
