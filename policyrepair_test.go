package casckpt_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
)

// TestPoliciesSurviveARepairOfALostDatabase: the policies of a store in a
// directory are backed up in the packs, so that a repair after casckpt.db
// is deleted outright rebuilds each (the newest of a policy changed twice),
// after a gc that collected the superseded backup and kept the others; a
// later prune then keeps a
// project with cleanup off and a running one, which are stale, and drops
// a completed one after its own days.
func TestPoliciesSurviveARepairOfALostDatabase(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s := openStoreWith(t, casckpt.Options{Now: clock})
	str := func(v string) *string { return &v }
	no, one := false, 1
	changes := map[string][]casckpt.PolicyChange{
		"debug":   {{Lifecycle: str(casckpt.LifecycleFailed), Cleanup: &no}},
		"running": {{Lifecycle: str(casckpt.LifecycleRunning)}},
		"done":    {{Lifecycle: str(casckpt.LifecycleCompleted), RetentionDays: &one}},
		"twice":   {{Lifecycle: str(casckpt.LifecycleCompleted), RetentionDays: &one}, {Lifecycle: str(casckpt.LifecycleRunning), Cleanup: &no}},
	}
	dirs, want := map[string]string{}, map[string]casckpt.Policy{}
	for name := range changes {
		dirs[name] = t.TempDir()
		writeFiles(t, dirs[name], name, 1)
		mustSnapshot(t, s, dirs[name], casckpt.SnapshotOptions{})
	}
	for step := range 2 {
		for name, list := range changes {
			if step < len(list) {
				p, err := s.SetPolicy(ctx, dirs[name], list[step])
				if err != nil {
					t.Fatal(err)
				}
				want[name] = p
			}
		}
		now = now.Add(time.Hour)
	}
	rules := casckpt.PruneOptions{StaleAfter: 7 * 24 * time.Hour, CompletedAfter: 7 * 24 * time.Hour, FailedAfter: 30 * 24 * time.Hour, KeepOrphans: true}
	// gc collects the backup of the policy that was changed since, and
	// only that: each current policy's backup stays.
	if res, err := s.GC(ctx); err != nil || res.ObjectsDeleted != 1 {
		t.Fatalf("gc: %+v %v, want the superseded policy backup deleted", res, err)
	}
	if res, err := s.GC(ctx); err != nil || res.ObjectsDeleted != 0 {
		t.Fatalf("gc again: %+v %v", res, err)
	}
	if err := os.Remove(filepath.Join(s.Location(), "casckpt.db")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	for name, dir := range dirs {
		p, err := s.Policy(ctx, dir)
		w := want[name]
		if err != nil || p.Lifecycle != w.Lifecycle || !p.LifecycleSince.Equal(w.LifecycleSince) || p.RetentionDays != w.RetentionDays || p.Cleanup != w.Cleanup || p.Test != w.Test || p.Keep != w.Keep {
			t.Fatalf("%s after the repair: %+v %v, want %+v", name, p, err, w)
		}
	}
	now = now.Add(40 * 24 * time.Hour)
	if _, err := s.Prune(ctx, rules); err != nil {
		t.Fatal(err)
	}
	for name, dir := range dirs {
		if n, keep := len(listIDs(t, s, dir)), name != "done"; n != map[bool]int{true: 1}[keep] {
			t.Fatalf("day 40: %d snapshots of %s left", n, name)
		}
	}
}
