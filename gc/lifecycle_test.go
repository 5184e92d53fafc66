package gc

import (
	"testing"
	"time"
)

// TestPlanRetentionLifecycle: a project's lifecycle replaces the stale
// rule; completed and failed projects go after their days (their own
// first), a finished test project at once, a running one never as an
// orphan, and one with cleanup off by no rule, keep included.
func TestPlanRetentionLifecycle(t *testing.T) {
	day := 24 * time.Hour
	now := time.Unix(100*86400, 0)
	old := now.Add(-400 * day)
	pol := Policy{StaleAfter: 7 * day, DropOrphans: true, CompletedAfter: 7 * day, FailedAfter: 30 * day, Keep: 1}
	for _, c := range []struct {
		name  string
		state State
		l     Lifecycle
		why   Why // of every dropped snapshot ("" keeps them, but for keep)
	}{
		{"completed 6 days", Live, Lifecycle{State: "completed", Since: now.Add(-6 * day)}, ""},
		{"completed 8 days", Live, Lifecycle{State: "completed", Since: now.Add(-8 * day)}, WhyCompleted},
		{"completed, own 1 day", Live, Lifecycle{State: "completed", Since: now.Add(-2 * day), Retention: day}, WhyCompleted},
		{"completed, own 30 days", Live, Lifecycle{State: "completed", Since: now.Add(-8 * day), Retention: 30 * day}, ""},
		{"failed 29 days", Live, Lifecycle{State: "failed", Since: now.Add(-29 * day)}, ""},
		{"failed 31 days", Live, Lifecycle{State: "failed", Since: now.Add(-31 * day)}, WhyFailed},
		{"running, stale and orphan", Orphan, Lifecycle{State: "running", Since: old}, ""},
		{"completed orphan", Orphan, Lifecycle{State: "completed", Since: now}, WhyOrphan},
		{"test running", Live, Lifecycle{State: "running", Since: now, Test: true}, ""},
		{"test completed", Live, Lifecycle{State: "completed", Since: now, Test: true}, WhyTest},
		{"test failed orphan", Orphan, Lifecycle{State: "failed", Since: now, Test: true}, WhyTest},
		{"no cleanup", Orphan, Lifecycle{State: "failed", Since: old, Test: true, NoCleanup: true}, ""},
		{"no cleanup, no lifecycle", Live, Lifecycle{NoCleanup: true}, ""},
	} {
		p := Project{Workdir: "/p", LastTouch: old, State: c.state, Snapshots: snaps(3), Lifecycle: c.l}
		plan := PlanRetention([]Project{p}, pol, now)
		wantDrops, wantWhy := 3, c.why
		switch {
		case c.why == "" && c.l.NoCleanup:
			wantDrops = 0
		case c.why == "":
			wantDrops, wantWhy = 2, WhyKeep // only keep 1 applies
		}
		if len(plan.Drops) != wantDrops || plan.Count(wantWhy) != wantDrops || (len(plan.Forget) == 1) != (c.why != "") {
			t.Errorf("%s: drops %+v, forget %v; want %d by %q", c.name, plan.Drops, plan.Forget, wantDrops, wantWhy)
		}
	}
}
