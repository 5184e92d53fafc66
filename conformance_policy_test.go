package casckpt_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
)

// conformLifecycle: prune's lifecycle rules, one rule set on every
// backend. Six projects snapshotted on day 0 get their policies there
// (one changed from a second machine, whose change the first sees);
// prunes on days 2, 8 and 31 drop a finished test project at once, a
// completed one with its own 1 day, a completed one after 7 days and a
// failed one after 30, each by its rule, and keep a running project and
// one with cleanup off, though stale. A new machine lists what is left,
// and the policies survive a rebuild of the records (on a bucket, a new
// machine's cache; in a directory, a repair of its database).
func conformLifecycle(t *testing.T, b backend) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	machineA := b.newMachine(t)
	s := machineA(casckpt.Options{Now: clock})
	dirs := map[string]string{}
	str := func(v string) *string { return &v }
	yes, no, one := true, false, 1
	changes := map[string]casckpt.PolicyChange{
		"test":      {Lifecycle: str(casckpt.LifecycleCompleted), Test: &yes},
		"short":     {Lifecycle: str(casckpt.LifecycleCompleted), RetentionDays: &one},
		"completed": {Lifecycle: str(casckpt.LifecycleCompleted)},
		"failed":    {Lifecycle: str(casckpt.LifecycleFailed)},
		"running":   {Lifecycle: str(casckpt.LifecycleRunning)},
		"debug":     {Lifecycle: str(casckpt.LifecycleFailed), Cleanup: &no},
	}
	for name, c := range changes {
		dirs[name] = t.TempDir()
		writeFiles(t, dirs[name], name, 1)
		if _, err := s.Snapshot(ctx, dirs[name], casckpt.SnapshotOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetPolicy(ctx, dirs[name], c); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(24 * time.Hour)
	five := 5
	if _, err := b.open(t, casckpt.Options{Now: clock}).SetPolicy(ctx, dirs["running"], casckpt.PolicyChange{Keep: &five}); err != nil {
		t.Fatal(err)
	}
	if p, err := machineA(casckpt.Options{Now: clock}).Policy(ctx, dirs["running"]); err != nil || p.Keep != 5 || p.Lifecycle != casckpt.LifecycleRunning || !p.LifecycleSince.Equal(now.Add(-24*time.Hour)) {
		t.Fatalf("the first machine reads the running project's policy as %+v %v, want keep 5 from the second", p, err)
	}
	rules := casckpt.PruneOptions{StaleAfter: 7 * 24 * time.Hour, CompletedAfter: 7 * 24 * time.Hour, FailedAfter: 30 * 24 * time.Hour, KeepOrphans: true}
	left := map[string]bool{"test": true, "short": true, "completed": true, "failed": true, "running": true, "debug": true}
	for _, step := range []struct {
		day     int
		dropped map[string]string // project: rule
	}{
		{2, map[string]string{"test": "test", "short": "completed"}},
		{8, map[string]string{"completed": "completed"}},
		{31, map[string]string{"failed": "failed"}},
	} {
		now = time.Date(2026, 3, 1+step.day, 12, 0, 0, 0, time.UTC)
		res, err := s.Prune(ctx, rules)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, d := range res.Drops {
			for name, dir := range dirs {
				if d.Project == dir {
					got[name] = d.Rule
				}
			}
		}
		counts := [4]int{res.DeletedCompleted, res.DeletedFailed, res.DeletedTest, res.DeletedStale}
		want := [4]int{}
		for _, rule := range step.dropped {
			want[map[string]int{"completed": 0, "failed": 1, "test": 2}[rule]]++
		}
		if !maps.Equal(got, step.dropped) || counts != want {
			t.Fatalf("day %d: dropped %v (completed, failed, test, stale %v), want %v (%v)", step.day, got, counts, step.dropped, want)
		}
		for name := range step.dropped {
			delete(left, name)
		}
		fresh := b.open(t, casckpt.Options{Now: clock})
		for name, dir := range dirs {
			if n := len(listIDs(t, fresh, dir)); n != map[bool]int{true: 1}[left[name]] {
				t.Fatalf("day %d: a new machine lists %d snapshots of %s", step.day, n, name)
			}
		}
	}
	r := b.open(t, casckpt.Options{Now: clock})
	if b.journaled {
		r = b.rebuild(t)
	} else if _, err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]casckpt.Policy{
		"running": {Lifecycle: casckpt.LifecycleRunning, Keep: 5, Cleanup: true},
		"debug":   {Lifecycle: casckpt.LifecycleFailed, Cleanup: false},
	} {
		p, err := r.Policy(ctx, dirs[name])
		if err != nil || p.Lifecycle != want.Lifecycle || p.Keep != want.Keep || p.Cleanup != want.Cleanup || p.Project != dirs[name] {
			t.Fatalf("rebuilt policy of %s: %+v %v, want %+v", name, p, err, want)
		}
	}
}
