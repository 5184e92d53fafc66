package casckpt

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/restorer"
	"github.com/casckpt/casckpt/manifest"
)

// KeptPath is a path that a safe restore left as it is, and why: "changed
// since the agent's last write", "not changed by an agent since the
// snapshot", "holds paths that are kept" (a directory), "a kept path
// above it is not a directory", ReasonExcludedNow or "changed during
// restore" (restorer.ReasonChangedDuring).
type KeptPath struct {
	Path   string
	Reason string
}

// ReasonExcludedNow is why a safe restore keeps a path that snapshots
// exclude now (ignored, or over the size limit) and that no record says an
// agent left as it is: it is a person's.
const ReasonExcludedNow = "excluded now"

// provenance is what the store knows of agents' work in a project since a
// snapshot, for a safe restore.
type provenance struct {
	// known: a turn ended or a write was recorded since the snapshot. A
	// safe restore without it restores everything.
	known bool
	// turns are the trees at the start and end of each turn after the
	// snapshot whose start and end snapshots are both still stored, newest
	// first.
	turns []turnTrees
	// writes are the states last recorded by record-write since the
	// snapshot, by path.
	writes map[string]cas.ID
}

type turnTrees struct {
	start, end cas.ID // root trees
	endSeq     uint64
	turn       index.Turn
}

// loadProvenance reads what agents did in project workdir since snapshot
// target, snaps being the project's snapshots.
//
// A turn is after the snapshot when it has ended on a newer snapshot (by
// sequence number, not clock, so it holds whatever the clock did), or on
// the snapshot itself no earlier than the snapshot was taken (a turn that
// ended on an unchanged tree is recorded against the newest snapshot). So
// a turn that was under way when the snapshot was taken counts: what it
// changed between its start and end is the agent's, before the snapshot or
// after. A turn whose end snapshot is gone is after the snapshot when it
// ended no earlier than the snapshot was taken; one whose start or end
// snapshot is gone says nothing of the paths it changed (they are kept).
// A recorded write counts when it was recorded no earlier than the
// snapshot was taken.
func loadProvenance(tx *index.Tx, workdir string, snaps []record, target record) (provenance, error) {
	p := provenance{writes: map[string]cas.ID{}}
	writes, err := tx.Writes(workdir)
	if err != nil {
		return p, err
	}
	for path, w := range writes {
		if !w.Time.Before(target.Time) {
			p.writes[path] = w.State
		}
	}
	turns, err := tx.Turns(workdir)
	if err != nil {
		return p, err
	}
	byID := make(map[cas.ID]record, len(snaps))
	for _, s := range snaps {
		byID[s.ID] = s
	}
	p.known = len(p.writes) > 0
	for _, t := range turns {
		if t.Open() {
			continue
		}
		end, endOK := byID[t.End]
		after := !t.Ended.Before(target.Time)
		if endOK {
			after = end.Seq > target.Seq || (end.Seq == target.Seq && after)
		}
		if !after {
			continue
		}
		p.known = true
		if start, ok := byID[t.Start]; ok && endOK {
			p.turns = append(p.turns, turnTrees{start: start.Root, end: end.Root, endSeq: end.Seq, turn: t})
		}
	}
	slices.SortStableFunc(p.turns, func(a, b turnTrees) int {
		return cmp.Or(cmp.Compare(b.endSeq, a.endSeq), b.turn.Ended.Compare(a.turn.Ended), b.turn.Started.Compare(a.turn.Started))
	})
	return p, nil
}

// agentStates returns, for each path that changes lists, the states agents
// left it in since the snapshot: at the end of the newest turn that changed
// it (between its start and end), and as record-write last recorded it.
// It reads from g the trees of the turns that differ; a turn whose trees
// are missing or damaged is passed over.
func (p provenance) agentStates(ctx context.Context, g cas.Getter, changes []manifest.Change) (map[string][]cas.ID, error) {
	states := make(map[string][]cas.ID, len(changes))
	need := make(map[string]bool, len(changes))
	for _, c := range changes {
		need[c.Path] = true
		if s, ok := p.writes[c.Path]; ok {
			states[c.Path] = append(states[c.Path], s)
		}
	}
	byTurn := map[string]bool{} // paths a newer turn changed
	for _, t := range p.turns {
		diff, err := manifest.Diff(ctx, g, t.start, t.end)
		if errors.Is(err, cas.ErrNotFound) || errors.Is(err, cas.ErrCorrupt) {
			continue // a damaged turn says nothing: what it changed is kept
		}
		if err != nil {
			return nil, err
		}
		for _, d := range diff {
			if need[d.Path] && !byTurn[d.Path] {
				byTurn[d.Path] = true
				states[d.Path] = append(states[d.Path], d.New.StateID()) // zero when deleted
			}
		}
	}
	return states, nil
}

// safePlan narrows plan to what agents changed (see restorer.Safe).
func (p provenance) safePlan(ctx context.Context, g cas.Getter, plan restorer.Plan) (restorer.Plan, []KeptPath, error) {
	states, err := p.agentStates(ctx, g, plan.Changes)
	if err != nil {
		return plan, nil, err
	}
	plan, kept := restorer.Safe(plan, states)
	out := make([]KeptPath, len(kept))
	for i, k := range kept {
		out[i] = KeptPath(k)
	}
	return plan, out, nil
}
