package gc

import (
	"slices"
	"time"

	"github.com/casckpt/casckpt/cas"
)

// Snapshot is what retention needs to know of a snapshot record.
type Snapshot struct {
	ID     cas.ID
	Root   cas.ID
	Time   time.Time
	Pinned bool
}

// State says whether a project's directory is there.
type State string

// The states of a project.
const (
	// Live: the directory is there.
	Live State = "live"
	// Orphan: the directory was observably deleted (it is missing from a
	// parent that is still the directory it was).
	Orphan State = "orphan"
	// Unreachable: the directory cannot be seen, but nothing shows it was
	// deleted (an unmounted volume, a missing or replaced parent). The
	// orphan rule never drops it.
	Unreachable State = "unreachable"
)

// Project is a project with its snapshots, newest first.
type Project struct {
	Workdir   string
	LastTouch time.Time
	// State is the state of the project's directory; only Orphan counts
	// for the orphan rule (the zero value does not).
	State     State
	Snapshots []Snapshot
	// Lifecycle is the project's own policy (casckpt policy).
	Lifecycle Lifecycle
}

// Lifecycle is a project's lifecycle and retention policy, as far as
// retention needs it. The zero value is a project without one: the rules
// of Policy apply as they are.
type Lifecycle struct {
	// State is "", "running", "completed" or "failed".
	State string
	// Since is when State last changed.
	Since time.Time
	// Test: dropped by the first plan after it is completed or failed.
	Test bool
	// Retention, when positive, replaces Policy.CompletedAfter or
	// FailedAfter for the project.
	Retention time.Duration
	// NoCleanup: no rule drops any of its snapshots (the size cap counts
	// them and drops from other projects).
	NoCleanup bool
}

// Policy is a set of retention rules. The zero value drops nothing.
type Policy struct {
	// Keep, when positive, keeps at most this many snapshots per project;
	// older unpinned ones are dropped.
	Keep int
	// StaleAfter, when positive, drops the unpinned snapshots of projects
	// not touched for this long.
	StaleAfter time.Duration
	// DropOrphans drops the unpinned snapshots of orphan projects (State
	// Orphan); unreachable ones are left to the other rules.
	DropOrphans bool
	// CompletedAfter and FailedAfter drop the unpinned snapshots of a
	// project completed (failed) this long ago; a project with a
	// lifecycle is never stale, and a running one never an orphan.
	CompletedAfter time.Duration
	FailedAfter    time.Duration
}

// Why says which rule dropped a snapshot.
type Why string

// The rules.
const (
	WhyKeep   Why = "keep"
	WhyOrphan Why = "orphan"
	WhyStale  Why = "stale"
	WhyCap    Why = "size-cap"
	// WhyCompleted, WhyFailed and WhyTest are the lifecycle's rules.
	WhyCompleted Why = "completed"
	WhyFailed    Why = "failed"
	WhyTest      Why = "test"
)

// Emptying reports whether rule why drops every unpinned snapshot of its
// project (so the project goes with them), not only some.
func (w Why) Emptying() bool {
	return w != WhyKeep && w != WhyCap
}

// Drop is one snapshot a plan drops.
type Drop struct {
	Project string
	ID      cas.ID
	Root    cas.ID
	Why     Why
}

// Plan is what a policy drops. A project listed in Forget loses every
// snapshot and its record (nothing pinned kept it).
type Plan struct {
	Drops  []Drop
	Forget []string
}

// Count returns how many snapshots the plan drops for a rule.
func (p Plan) Count(why Why) int {
	n := 0
	for _, d := range p.Drops {
		if d.Why == why {
			n++
		}
	}
	return n
}

// Drops reports whether the plan drops snapshot id.
func (p Plan) dropped(id cas.ID) bool {
	return slices.ContainsFunc(p.Drops, func(d Drop) bool { return d.ID == id })
}

// PlanRetention applies a policy at time now. Pinned snapshots are never
// dropped, and a project keeps its record while it has one.
func PlanRetention(projects []Project, pol Policy, now time.Time) Plan {
	var plan Plan
	for _, p := range projects {
		why := projectRule(p, pol, now)
		pinned := false
		for i, s := range p.Snapshots {
			switch {
			case s.Pinned:
				pinned = true
			case p.Lifecycle.NoCleanup:
			case why != "":
				plan.Drops = append(plan.Drops, Drop{p.Workdir, s.ID, s.Root, why})
			case pol.Keep > 0 && i >= pol.Keep:
				plan.Drops = append(plan.Drops, Drop{p.Workdir, s.ID, s.Root, WhyKeep})
			}
		}
		if why != "" && !pinned {
			plan.Forget = append(plan.Forget, p.Workdir)
		}
	}
	return plan
}

// projectRule returns the rule that drops the whole of project p at time
// now ("" when none does): a finished test project's, an orphan's (never
// a running project), a finished project's after its days, else a
// project without lifecycle's when it is stale.
func projectRule(p Project, pol Policy, now time.Time) Why {
	l := p.Lifecycle
	finished := l.State == "completed" || l.State == "failed"
	after := map[string]time.Duration{"completed": pol.CompletedAfter, "failed": pol.FailedAfter}[l.State]
	if l.Retention > 0 {
		after = l.Retention
	}
	switch {
	case l.NoCleanup:
		return ""
	case l.Test && finished:
		return WhyTest
	case pol.DropOrphans && p.State == Orphan && l.State != "running":
		return WhyOrphan
	case finished && after > 0 && now.Sub(l.Since) > after:
		return Why(l.State)
	case l.State == "" && pol.StaleAfter > 0 && now.Sub(p.LastTouch) > pol.StaleAfter:
		return WhyStale
	}
	return ""
}
