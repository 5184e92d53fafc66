package casckpt_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/s3test"
)

// backend opens stores of one kind for the use-case tests that every
// kind runs: each open is a machine of its own over the same store,
// with the options given (a clock).
type backend struct {
	name string
	open func(t *testing.T, opts casckpt.Options) *casckpt.Store
	// pastGrace lets gc's grace period pass on the server's clock: nothing
	// on a directory (gc deletes at once), the in-memory bucket's clock
	// advanced; nil on versitygw, whose clock a test would have to wait
	// out (TestS3GCTwoPhases does).
	pastGrace func()
}

// backends returns a directory, an in-memory bucket and a bucket on
// versitygw, each new and empty.
func backends() []backend {
	return []backend{
		{name: "local", pastGrace: func() {}, open: func() func(*testing.T, casckpt.Options) *casckpt.Store {
			var once sync.Once
			var dir string
			return func(t *testing.T, opts casckpt.Options) *casckpt.Store {
				once.Do(func() { dir = t.TempDir() })
				s, err := casckpt.Open(dir, opts)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { checkVerifies(t, s) })
				return s
			}
		}()},
		memBackend(newMemBucket()),
		{name: "versitygw", open: func() func(*testing.T, casckpt.Options) *casckpt.Store {
			var srv *s3test.Server
			var url string
			return func(t *testing.T, opts casckpt.Options) *casckpt.Store {
				if srv == nil {
					srv = s3test.Start(t)
					url = s3URL(srv)
				}
				opts.S3, opts.CacheDir = s3Server(srv), t.TempDir()
				s, err := casckpt.OpenURL(context.Background(), url, opts)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { checkVerifies(t, s) })
				return s
			}
		}()},
	}
}

// memBackend is the backend of stores over in-memory bucket m.
func memBackend(m *memBucket) backend {
	return backend{name: "membucket", pastGrace: func() { m.Advance(memGrace + time.Second) },
		open: func(t *testing.T, opts casckpt.Options) *casckpt.Store {
			opts.CacheDir, opts.GCGrace, opts.GCHorizon = t.TempDir(), memGrace, memHorizon
			s, err := casckpt.OpenBucket(m.url, m.Bucket, opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { checkVerifies(t, s) })
			return s
		}}
}

// TestPruneOnEveryBackend: on every kind of store, prune --dry-run
// reports the stale project's drop and changes nothing; prune drops it,
// records the run, and skips within the minimum interval by the store's
// clock, and runs again past it.
func TestPruneOnEveryBackend(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
			clock := func() time.Time { return now }
			s := b.open(t, casckpt.Options{Now: clock})
			dirA, dirB := t.TempDir(), t.TempDir()
			writeFiles(t, dirA, "a", 1)
			writeFiles(t, dirB, "b", 1)
			a, err := s.Snapshot(ctx, dirA, casckpt.SnapshotOptions{})
			if err != nil {
				t.Fatal(err)
			}
			now = now.Add(10 * 24 * time.Hour)
			writeFiles(t, dirB, "b2", 1)
			if _, err := s.Snapshot(ctx, dirB, casckpt.SnapshotOptions{}); err != nil {
				t.Fatal(err)
			}
			rules := casckpt.PruneOptions{StaleAfter: 7 * 24 * time.Hour, KeepOrphans: true, MinInterval: time.Hour}
			dry := rules
			dry.DryRun = true
			res, err := s.Prune(ctx, dry)
			want := []casckpt.Drop{{Project: dirA, ID: a.ID, Rule: "stale"}}
			if err != nil || !slices.Equal(res.Drops, want) || res.DeletedStale != 1 || res.SnapshotsDropped != 1 {
				t.Fatalf("dry run: %+v %v, want the drop of %s", res, err, a.ID.Short())
			}
			if got := listIDs(t, b.open(t, casckpt.Options{Now: clock}), dirA); !slices.Equal(got, []casckpt.ID{a.ID}) {
				t.Fatalf("after the dry run a new open lists %v, want %s", got, a.ID.Short())
			}
			if res, err = s.Prune(ctx, rules); err != nil || res.Skipped || !slices.Equal(res.Drops, want) || res.DeletedStale != 1 {
				t.Fatalf("prune: %+v %v, want the drop of %s", res, err, a.ID.Short())
			}
			if got := listIDs(t, b.open(t, casckpt.Options{Now: clock}), dirA); len(got) != 0 {
				t.Fatalf("after prune a new open lists %v for the stale project", got)
			}
			now = now.Add(time.Hour - time.Second)
			if res, err = s.Prune(ctx, rules); err != nil || !res.Skipped || len(res.Drops) != 0 {
				t.Fatalf("prune within the minimum interval: %+v %v, want it skipped", res, err)
			}
			now = now.Add(2 * time.Second)
			if res, err = s.Prune(ctx, rules); err != nil || res.Skipped {
				t.Fatalf("prune past the minimum interval: %+v %v, want it run", res, err)
			}
		})
	}
}

// TestForgetPinAndCapOnEveryBackend: on every kind of store, a forgotten
// snapshot stays forgotten and a pinned one survives prune's size cap,
// which drops every other snapshot of a cap of 1 byte and says it is not
// met; a new open of the store lists exactly the pinned snapshot.
func TestForgetPinAndCapOnEveryBackend(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := b.open(t, casckpt.Options{})
			dir := t.TempDir()
			var ids []casckpt.ID
			for i := range 3 {
				writeFiles(t, dir, fmt.Sprint("v", i), 2)
				res, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{})
				if err != nil || !res.Created {
					t.Fatalf("snapshot %d: %+v %v", i, res, err)
				}
				ids = append(ids, res.ID)
			}
			if _, err := s.Pin(ctx, dir, casckpt.Ref(ids[0].String())); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Forget(ctx, dir, casckpt.Ref(ids[1].String())); err != nil {
				t.Fatal(err)
			}
			if got := listIDs(t, b.open(t, casckpt.Options{}), dir); !slices.Equal(got, []casckpt.ID{ids[2], ids[0]}) {
				t.Fatalf("after forget a new open lists %v, want %s and %s", got, ids[2].Short(), ids[0].Short())
			}
			res, err := s.Prune(ctx, casckpt.PruneOptions{MaxSize: 1})
			want := []casckpt.Drop{{Project: dir, ID: ids[2], Rule: "size-cap"}}
			if err != nil || res.CapMet || !slices.Equal(res.Drops, want) {
				t.Fatalf("prune to 1 byte: %+v %v, want the drop of %s and the cap not met", res, err, ids[2].Short())
			}
			fresh := b.open(t, casckpt.Options{})
			if got := listIDs(t, fresh, dir); !slices.Equal(got, []casckpt.ID{ids[0]}) {
				t.Fatalf("after prune a new open lists %v, want the pinned %s", got, ids[0].Short())
			}
			if _, err := fresh.Restore(ctx, dir, casckpt.Ref(ids[0].String()), casckpt.RestoreOptions{}); err != nil {
				t.Fatalf("restore of the pinned snapshot: %v", err)
			}
		})
	}
}

// TestGCOnEveryBackend: on every kind of store whose server's clock a
// test can move, gc (run again past the grace period on a bucket)
// deletes the objects of two forgotten snapshots that nothing needs, and
// the kept snapshot restores byte-exact from a new open. Another
// machine's snapshot of one forgotten tree between the two runs makes its
// data live again: it restores too.
func TestGCOnEveryBackend(t *testing.T) {
	for _, b := range backends() {
		if b.pastGrace == nil {
			continue // TestS3GCTwoPhases runs gc on versitygw
		}
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := b.open(t, casckpt.Options{})
			dir, dirB := t.TempDir(), t.TempDir()
			var ids []casckpt.ID
			var trees []map[string][]byte
			for i, seed := range []string{"gone", "again", "kept"} {
				os.RemoveAll(dir)
				os.MkdirAll(dir, 0o755)
				trees = append(trees, writeFiles(t, dir, seed, 3))
				res, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{})
				if err != nil || !res.Created {
					t.Fatalf("snapshot %d: %+v %v", i, res, err)
				}
				ids = append(ids, res.ID)
			}
			for _, id := range ids[:2] {
				if _, err := s.Forget(ctx, dir, casckpt.Ref(id.String())); err != nil {
					t.Fatal(err)
				}
			}
			first, err := s.GC(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for name, data := range trees[1] {
				os.WriteFile(filepath.Join(dirB, name), data, 0o644)
			}
			again, err := b.open(t, casckpt.Options{}).Snapshot(ctx, dirB, casckpt.SnapshotOptions{})
			if err != nil || !again.Created {
				t.Fatalf("snapshot of a forgotten tree: %+v %v", again, err)
			}
			b.pastGrace()
			second, err := s.GC(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if first.ObjectsDeleted+second.ObjectsDeleted == 0 {
				t.Fatalf("gc deleted nothing: %+v then %+v", first, second)
			}
			fresh := b.open(t, casckpt.Options{})
			verifyClean(t, fresh)
			restoresExactly(t, fresh, dir, ids[2], trees[2])
			restoresExactly(t, fresh, dirB, again.ID, trees[1])
			if _, err := fresh.Restore(ctx, dir, casckpt.Ref(ids[0].String()), casckpt.RestoreOptions{}); err == nil {
				t.Fatalf("forgotten snapshot %s restores", ids[0].Short())
			}
		})
	}
}
