package casckpt

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
