package casckpt_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/casckpt/casckpt"
)

// TestConformanceFallback runs conformFallback on every backend of the
// conformance suite.
func TestConformanceFallback(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) { conformFallback(t, b) })
	}
}

// conformFallback: a workflow host's newest state loses its pack behind
// the store's back (a disk's or a bucket's loss). On a new machine, cat
// and restore without Fallback refuse it as damaged; with Fallback they
// use the state before, naming the lost one as tried. Forgotten and
// collected, the lost state leaves a store that verifies clean.
func conformFallback(t *testing.T, b backend) {
	ctx := context.Background()
	s := b.open(t, casckpt.Options{})
	dir := t.TempDir()
	ids := threeStatesNewestLost(t, b, s, dir)

	fresh := b.open(t, casckpt.Options{})
	var out bytes.Buffer
	if err := fresh.Cat(ctx, dir, "@1", "checkpoint.json", &out); !errors.Is(err, casckpt.ErrDamaged) {
		t.Fatalf("cat of the lost state: %v, want ErrDamaged", err)
	}
	out.Reset()
	cat, err := fresh.CatWith(ctx, dir, "@1", "checkpoint.json", &out, casckpt.CatOptions{Fallback: true, Check: casckpt.CheckJSON})
	if err != nil || out.String() != iterationState(1) || cat.ID != ids[1] || len(cat.Tried) != 1 || cat.Tried[0].ID != ids[2] {
		t.Fatalf("cat with Fallback: %q %+v %v", out.String(), cat, err)
	}
	writeState(t, dir, `{"iteration": `)
	if _, err := fresh.Restore(ctx, dir, "@1", casckpt.RestoreOptions{}); !errors.Is(err, casckpt.ErrDamaged) {
		t.Fatalf("restore of the lost state: %v, want ErrDamaged", err)
	}
	res, err := fresh.Restore(ctx, dir, "@1", casckpt.RestoreOptions{Fallback: true})
	if err != nil || res.RestoredTo != ids[1] || len(res.Tried) != 1 || res.Tried[0].ID != ids[2] {
		t.Fatalf("restore with Fallback: %+v %v", res, err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "checkpoint.json")); string(got) != iterationState(1) {
		t.Fatalf("restore with Fallback wrote %q, want %q", got, iterationState(1))
	}
	if _, err := fresh.Forget(ctx, dir, casckpt.Ref(ids[2].String())); err != nil {
		t.Fatal(err)
	}
	collectPastGrace(t, b, fresh)
}

// writeState writes checkpoint.json in dir as a workflow's step does.
func writeState(t *testing.T, dir, state string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "checkpoint.json"), []byte(state), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestConformanceHeal runs conformHeal on every backend of the
// conformance suite.
func TestConformanceHeal(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) { conformHeal(t, b) })
	}
}

// conformHeal: a workflow host's newest state loses its pack, and the
// tree is unchanged since: the working tree holds the only copy of that
// state. On a new machine, a restore of the state before stores it
// again before overwriting it, and on another machine the pre-restore
// snapshot gives it back byte-exact. Forgotten and collected, the lost
// state's record leaves a store that verifies clean (on a bucket, the
// cache of the machine that wrote the lost pack once repaired).
func conformHeal(t *testing.T, b backend) {
	ctx := context.Background()
	s := b.open(t, casckpt.Options{})
	dir := t.TempDir()
	ids := threeStatesNewestLost(t, b, s, dir)

	res, err := b.open(t, casckpt.Options{}).Restore(ctx, dir, casckpt.Ref(ids[1].String()), casckpt.RestoreOptions{})
	if err != nil || res.RestoredTo != ids[1] || res.PreRestoreID.IsZero() {
		t.Fatalf("restore over the only copy of the lost state: %+v %v", res, err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "checkpoint.json")); string(got) != iterationState(1) {
		t.Fatalf("restore wrote %q, want %q", got, iterationState(1))
	}
	other := b.open(t, casckpt.Options{})
	if _, err := other.Restore(ctx, dir, casckpt.Ref(res.PreRestoreID.String()), casckpt.RestoreOptions{}); err != nil {
		t.Fatalf("restore of the pre-restore snapshot on another machine: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "checkpoint.json")); string(got) != iterationState(2) {
		t.Fatalf("the pre-restore snapshot gave back %q, want %q", got, iterationState(2))
	}
	if _, err := other.Forget(ctx, dir, casckpt.Ref(ids[2].String())); err != nil {
		t.Fatal(err)
	}
	collectPastGrace(t, b, other)
	if b.journaled {
		// The machine that wrote the lost pack still locates the state in
		// it (a sync keeps an object's first location): its gc refuses,
		// and its repair rebuilds the cache from the bucket.
		if _, err := s.GC(ctx); err == nil {
			t.Fatal("gc on the machine that wrote the lost pack went on")
		}
		if _, err := s.Repair(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// iterationState is the workflow state checkpoint.json holds at step i.
func iterationState(i int) string { return fmt.Sprintf(`{"iteration": %d}`, i) }

// threeStatesNewestLost snapshots three workflow states of dir with s and
// then loses, behind the store's back, the packs the newest one wrote. It
// returns the three snapshots' IDs, oldest first.
func threeStatesNewestLost(t *testing.T, b backend, s *casckpt.Store, dir string) []casckpt.ID {
	t.Helper()
	var ids []casckpt.ID
	var added []string
	for i := range 3 {
		before := b.packs(t)
		writeState(t, dir, iterationState(i))
		res, err := s.Snapshot(context.Background(), dir, casckpt.SnapshotOptions{Keep: 10})
		if err != nil || !res.Created {
			t.Fatalf("step %d: %+v %v", i, res, err)
		}
		ids = append(ids, res.ID)
		added = slices.DeleteFunc(b.packs(t), func(p string) bool { return slices.Contains(before, p) })
	}
	if len(added) == 0 {
		t.Fatal("the newest snapshot wrote no pack")
	}
	for _, p := range added {
		b.losePack(t, p)
	}
	return ids
}
