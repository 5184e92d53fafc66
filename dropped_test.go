package casckpt_test

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/internal/s3test/membucket"
)

// conformDroppedElsewhere: long-lived stores of one machine (a process
// whose cache counts as up to date for an hour after each sync) read
// while another cache forgets the older of two snapshots and gc deletes
// its packs past the grace period. Verify (by the store that took both)
// checks only the kept snapshot and reports no damage; a cat and a
// restore of the dropped one say it was dropped (ErrNotFound), not
// damaged, and change nothing.
func conformDroppedElsewhere(t *testing.T, b backend) {
	ctx := context.Background()
	longLived := casckpt.LongLived(casckpt.Options{}, time.Hour)
	a := b.open(t, longLived)
	dir := t.TempDir()
	dropped, keep, kept := dropAndKeep(t, a, dir)
	// Readers with caches of their own, synced before the drop (by a
	// read of the records alone: a bucket's blocks read stay cached).
	longLived.Machine = a.Machine()
	readers := []*casckpt.Store{b.open(t, longLived), b.open(t, longLived)}
	for _, r := range readers {
		if p, err := r.Place(ctx, dir, casckpt.Ref(dropped.ID.String())); err != nil || p.Number != 2 {
			t.Fatalf("a reader places %s at %+v (%v), want @2", dropped.ID.Short(), p, err)
		}
	}
	other := b.open(t, casckpt.Options{Machine: a.Machine()})
	if _, err := other.Forget(ctx, dir, casckpt.Ref(dropped.ID.String())); err != nil {
		t.Fatal(err)
	}
	if freed := collectPastGrace(t, b, other); freed.ObjectsDeleted == 0 {
		t.Fatal("gc deleted nothing")
	}

	if v := verifyClean(t, a); v.SnapshotsChecked != 1 {
		t.Fatalf("verify checked %d snapshots, want the kept one", v.SnapshotsChecked)
	}
	err := readers[0].Cat(ctx, dir, casckpt.Ref(dropped.ID.String()), "f0.txt", io.Discard)
	isDropped(t, "cat", err)
	_, err = readers[1].Restore(ctx, dir, casckpt.Ref(dropped.ID.String()), casckpt.RestoreOptions{})
	isDropped(t, "restore", err)
	for name, data := range kept {
		if got, err := os.ReadFile(dir + "/" + name); err != nil || string(got) != string(data) {
			t.Fatalf("the refused restore changed %s (%v)", name, err)
		}
	}
	restoresExactly(t, a, dir, keep.ID, kept)
}

// dropAndKeep takes two snapshots of dir with store a, of other files
// each: the one a test will drop elsewhere, then the one it keeps, and
// returns both and the files of the kept one.
func dropAndKeep(t *testing.T, a *casckpt.Store, dir string) (dropped, keep casckpt.SnapshotResult, kept map[string][]byte) {
	t.Helper()
	ctx := context.Background()
	writeFiles(t, dir, "dropped", 3)
	dropped, err := a.Snapshot(ctx, dir, casckpt.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(dir)
	os.MkdirAll(dir, 0o755)
	kept = writeFiles(t, dir, "kept", 3)
	keep, err = a.Snapshot(ctx, dir, casckpt.SnapshotOptions{})
	if err != nil || !keep.Created {
		t.Fatalf("snapshot: %+v %v", keep, err)
	}
	return dropped, keep, kept
}

// isDropped fails the test unless err, of op on a snapshot dropped
// elsewhere, says it is not found (and dropped), not damaged.
func isDropped(t *testing.T, op string, err error) {
	t.Helper()
	if !errors.Is(err, casckpt.ErrNotFound) || errors.Is(err, casckpt.ErrDamaged) || !strings.Contains(err.Error(), "dropped") {
		t.Fatalf("%s of a snapshot dropped elsewhere: %v, want not found (dropped)", op, err)
	}
}

// gcOnFirstRead is an in-memory bucket that runs gc (once, when armed)
// as its store opens its first pack: between a verify's sync and its
// reads.
type gcOnFirstRead struct {
	*membucket.Bucket
	armed atomic.Bool
	once  sync.Once
	gc    func()
}

func (g *gcOnFirstRead) OpenSized(ctx context.Context, name string, size int64) (cas.PackReader, error) {
	if g.armed.Load() {
		g.once.Do(g.gc)
	}
	return g.Bucket.OpenSized(ctx, name, size)
}

// TestVerifyRechecksAfterGC: another cache forgets a snapshot and gc
// deletes its packs after a verify's sync, before its reads: the verify
// meets the missing packs, syncs again and checks again, and reports no
// damage, having checked the kept snapshot alone.
func TestVerifyRechecksAfterGC(t *testing.T) {
	m := newMemBucket()
	ctx := context.Background()
	hook := &gcOnFirstRead{Bucket: m.Bucket}
	a := m.openOver(t, hook)
	dir := t.TempDir()
	dropped, _, kept := dropAndKeep(t, a, dir)
	other, err := casckpt.OpenBucket(m.url, m.Bucket, casckpt.Options{CacheDir: t.TempDir(), GCGrace: memGrace, GCHorizon: memHorizon, Machine: a.Machine()})
	if err != nil {
		t.Fatal(err)
	}
	var freed int
	hook.gc = func() {
		if _, err := other.Forget(ctx, dir, casckpt.Ref(dropped.ID.String())); err != nil {
			t.Errorf("forget: %v", err)
		}
		for range 2 {
			res, err := other.GC(ctx)
			if err != nil {
				t.Errorf("gc: %v", err)
			}
			freed += res.ObjectsDeleted
			m.Advance(memGrace + time.Second)
		}
	}
	hook.armed.Store(true)
	v := verifyClean(t, a)
	if freed == 0 {
		t.Fatal("gc deleted nothing during the verify")
	}
	if v.SnapshotsChecked != 1 {
		t.Fatalf("verify checked %d snapshots, want the kept one", v.SnapshotsChecked)
	}
	restoresExactly(t, a, dir, listIDs(t, a, dir)[0], kept)
}
