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
}

// Why says which rule dropped a snapshot.
type Why string

// The rules.
const (
	WhyKeep   Why = "keep"
	WhyOrphan Why = "orphan"
	WhyStale  Why = "stale"
	WhyCap    Why = "size-cap"
)

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
		var why Why
		switch {
		case pol.DropOrphans && p.State == Orphan:
			why = WhyOrphan
		case pol.StaleAfter > 0 && now.Sub(p.LastTouch) > pol.StaleAfter:
			why = WhyStale
		}
		pinned := false
		for i, s := range p.Snapshots {
			switch {
			case s.Pinned:
				pinned = true
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
