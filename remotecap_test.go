package casckpt_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/s3test"
)

// TestS3SizeCap: on a bucket the size cap drops, as locally, the oldest
// unpinned snapshots until the live data fits, never the pinned one and
// never another project's last one, by writing dropped markers (no pack
// is deleted then); a new cache no longer lists them; gc's first phase,
// run by the snapshot on its way out, lists their packs and a gc past the
// grace period deletes exactly those. prune --max-size then drops every
// unpinned snapshot of a cap of 1 byte, and says the cap is not met. The
// bucket is in memory: the test advances its clock past the grace period.
func TestS3SizeCap(t *testing.T) {
	m := newMemBucket()
	ctx := context.Background()
	a, b := m.open(t), m.open(t)
	dirA, dirB := t.TempDir(), t.TempDir()
	trees := map[casckpt.ID]map[string][]byte{}
	added := map[casckpt.ID][]string{}
	var largest int64
	take := func(s *casckpt.Store, dir, seed string, limit int64) casckpt.SnapshotResult {
		t.Helper()
		os.RemoveAll(dir)
		os.MkdirAll(dir, 0o755)
		files := writeFiles(t, dir, seed, 4)
		was, before := m.packBytes(t)
		res, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{MaxStoreSize: limit})
		if err != nil || !res.Created {
			t.Fatalf("snapshot %s: %+v %v", seed, res, err)
		}
		now, after := m.packBytes(t)
		largest = max(largest, now-was)
		trees[res.ID] = files
		for _, k := range after {
			if !slices.Contains(before, k) {
				added[res.ID] = append(added[res.ID], k)
			}
		}
		return res
	}
	var ids []casckpt.ID // A0 .. A3
	for i := range 4 {
		ids = append(ids, take(a, dirA, fmt.Sprint("a", i), -1).ID)
	}
	if _, err := a.Pin(ctx, dirA, casckpt.Ref(ids[0].String())); err != nil {
		t.Fatal(err)
	}
	b0 := take(b, dirB, "b0", -1).ID
	_, packsBefore := m.packBytes(t)

	// Live: A0 .. A4 and B0, 6 snapshots of one size; a cap of 3.5 of them
	// drops A1, A2, A3 (A0 is pinned, A4 just taken, B0 B's last).
	a4 := take(a, dirA, "a4", largest*7/2)
	if !slices.Equal(a4.Dropped, ids[1:]) || len(a4.Warnings) != 0 {
		t.Fatalf("the cap dropped %v (warnings %v), want %v", a4.Dropped, a4.Warnings, ids[1:])
	}
	_, packsNow := m.packBytes(t)
	for _, k := range packsBefore {
		if !slices.Contains(packsNow, k) {
			t.Fatalf("the size cap deleted pack %s", k)
		}
	}
	if n := len(m.Keys("commits/")); n != 6 {
		t.Fatalf("%d commits, want 6: the cap deletes none", n)
	}
	if n := len(m.Keys("dropped/packs/pending/")); n != 1 {
		t.Fatalf("%d pending lists, want 1: the snapshot runs gc's first phase after the cap dropped", n)
	}
	fresh := m.open(t)
	if got := listIDs(t, fresh, dirA); !slices.Equal(got, []casckpt.ID{a4.ID, ids[0]}) {
		t.Fatalf("a new cache lists %v, want A4 and the pinned A0", got)
	}
	if got := listIDs(t, fresh, dirB); !slices.Equal(got, []casckpt.ID{b0}) {
		t.Fatalf("a new cache lists %v for B, want its only snapshot", got)
	}

	collector := m.open(t)
	m.Advance(memGrace + time.Second)
	_, packsBefore = m.packBytes(t)
	if _, err := collector.GC(ctx); err != nil {
		t.Fatal(err)
	}
	_, packsNow = m.packBytes(t)
	var want, got []string
	for _, id := range ids[1:] {
		want = append(want, added[id]...)
	}
	for _, k := range packsBefore {
		if !slices.Contains(packsNow, k) {
			got = append(got, k)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("gc deleted %v, want the packs of the dropped snapshots %v", got, want)
	}
	fresh = m.open(t)
	for _, id := range []casckpt.ID{a4.ID, ids[0]} {
		restoresExactly(t, fresh, dirA, id, trees[id])
	}
	restoresExactly(t, fresh, dirB, b0, trees[b0])

	res, err := b.Prune(ctx, casckpt.PruneOptions{MaxSize: 1})
	if err != nil || res.CapMet || res.SnapshotsDropped != 2 {
		t.Fatalf("prune --max-size of 1 byte: %+v %v", res, err)
	}
	for _, d := range res.Drops {
		if d.Rule != "size-cap" || d.ID == ids[0] {
			t.Fatalf("prune dropped %+v", d)
		}
	}
	fresh = m.open(t)
	if got := listIDs(t, fresh, dirA); !slices.Equal(got, []casckpt.ID{ids[0]}) {
		t.Fatalf("after prune a new cache lists %v, want the pinned A0", got)
	}
	if got, err := fresh.List(ctx, dirB, 0); err != nil || len(got) != 0 {
		t.Fatalf("after prune a new cache lists %v for B (%v), want none", got, err)
	}
}

// TestS3SizeCapRefusesASnapshotOverHalfTheCap: on a bucket too, a
// snapshot that alone would take more than half of the cap is refused and
// publishes nothing; the other project keeps every snapshot.
func TestS3SizeCapRefusesASnapshotOverHalfTheCap(t *testing.T) {
	srv := s3test.Start(t)
	url := s3URL(srv)
	ctx := context.Background()
	prefix := strings.TrimPrefix(url, "s3://"+srv.Bucket+"/") + "/"
	s := openGC(t, srv, url, nil)
	dirA, dirB := t.TempDir(), t.TempDir()
	for i := range 2 {
		writeFiles(t, dirA, fmt.Sprint("a", i), 4)
		if _, err := s.Snapshot(ctx, dirA, casckpt.SnapshotOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	before := listIDs(t, s, dirA)
	commits := len(keysUnder(t, srv, prefix+"commits/"))
	randomFile(t, filepath.Join(dirB, "big.bin"), 300_000)
	_, err := s.Snapshot(ctx, dirB, casckpt.SnapshotOptions{MaxStoreSize: 400_000})
	if !errors.Is(err, casckpt.ErrRefused) || !strings.Contains(err.Error(), "more than half of its 400000-byte") {
		t.Fatalf("a snapshot of 300 kB under a 400 kB cap: %v", err)
	}
	if n := len(keysUnder(t, srv, prefix+"commits/")); n != commits {
		t.Fatalf("%d commits, want %d: a refused snapshot publishes nothing", n, commits)
	}
	fresh := openGC(t, srv, url, nil)
	if got := listIDs(t, fresh, dirA); !slices.Equal(got, before) {
		t.Fatalf("a new cache lists %v for A, want %v", got, before)
	}
	if got := listIDs(t, fresh, dirB); len(got) != 0 {
		t.Fatalf("a new cache lists the refused snapshot: %v", got)
	}
}
