package gc

import (
	"slices"
	"strings"

	"github.com/casckpt/casckpt/cas"
)

// CapInput is what PlanCap needs besides the plan it extends.
type CapInput struct {
	Projects []Project
	// Graph was marked from every snapshot root of Projects, one reference
	// per snapshot; PlanCap releases the roots it drops.
	Graph *Graph
	// Size is what an object occupies in the store once compacted.
	Size func(cas.ID) int64
	// Fixed is the store's size besides its live objects (its database).
	Fixed int64
	Cap   int64
	// Protect is never dropped (the snapshot just taken), and the project
	// Current is spared the second phase.
	Protect cas.ID
	Current string
}

// PlanCap extends plan with the snapshots the size cap drops and returns the
// store's projected size once they and the plan's drops are collected. It
// drops the oldest unpinned snapshots round-robin across projects, never a
// project's last one; if that is not enough, the remaining unpinned
// snapshots of the least recently touched other projects. A project
// with NoCleanup loses none: its snapshots count. fits is false
// when even that is not enough (pinned snapshots are larger than the cap).
func PlanCap(plan Plan, in CapInput) (out Plan, projected int64, fits bool) {
	out = Plan{Drops: slices.Clone(plan.Drops), Forget: slices.Clone(plan.Forget)}
	for _, d := range plan.Drops {
		in.Graph.Release(d.Root, in.Size)
	}
	projected = in.Fixed
	for id, n := range in.Graph.refs {
		if n > 0 {
			projected += in.Size(id)
		}
	}
	if projected <= in.Cap {
		return out, projected, true
	}
	drop := func(p Project, s Snapshot) {
		out.Drops = append(out.Drops, Drop{p.Workdir, s.ID, s.Root, WhyCap})
		projected -= in.Graph.Release(s.Root, in.Size)
	}

	// Candidates per project, oldest first, and how many snapshots remain.
	type queue struct {
		p         Project
		cands     []Snapshot
		remaining int
	}
	var queues []*queue
	for _, p := range in.Projects {
		q := &queue{p: p}
		for i := len(p.Snapshots) - 1; i >= 0; i-- {
			s := p.Snapshots[i]
			if out.dropped(s.ID) {
				continue
			}
			q.remaining++
			if !s.Pinned && s.ID != in.Protect && !p.Lifecycle.NoCleanup {
				q.cands = append(q.cands, s)
			}
		}
		queues = append(queues, q)
	}
	// Phase 1: round robin, oldest candidate first within each round.
	for projected > in.Cap {
		var round []*queue
		for _, q := range queues {
			if len(q.cands) > 0 && q.remaining > 1 {
				round = append(round, q)
			}
		}
		if len(round) == 0 {
			break
		}
		slices.SortFunc(round, func(a, b *queue) int {
			if c := a.cands[0].Time.Compare(b.cands[0].Time); c != 0 {
				return c
			}
			return strings.Compare(a.p.Workdir, b.p.Workdir)
		})
		for _, q := range round {
			if projected <= in.Cap {
				break
			}
			drop(q.p, q.cands[0])
			q.cands, q.remaining = q.cands[1:], q.remaining-1
		}
	}
	// Phase 2: the least recently touched other projects lose the rest.
	others := slices.DeleteFunc(slices.Clone(queues), func(q *queue) bool { return q.p.Workdir == in.Current })
	slices.SortFunc(others, func(a, b *queue) int { return a.p.LastTouch.Compare(b.p.LastTouch) })
	for _, q := range others {
		for len(q.cands) > 0 && projected > in.Cap {
			drop(q.p, q.cands[0])
			q.cands, q.remaining = q.cands[1:], q.remaining-1
		}
		if q.remaining == 0 && !slices.Contains(out.Forget, q.p.Workdir) {
			out.Forget = append(out.Forget, q.p.Workdir)
		}
	}
	return out, projected, projected <= in.Cap
}
