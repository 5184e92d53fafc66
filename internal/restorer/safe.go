package restorer

import (
	"path"
	"slices"
	"strings"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/manifest"
)

// The reasons a safe restore keeps a path.
const (
	// ReasonChangedSince: an agent changed the path since the snapshot,
	// but it is no longer as the agent left it (someone edited it since).
	ReasonChangedSince = "changed since the agent's last write"
	// ReasonNotAgent: no agent changed the path since the snapshot.
	ReasonNotAgent = "not changed by an agent since the snapshot"
	// ReasonHoldsKept: a directory to delete or replace holds kept paths.
	ReasonHoldsKept = "holds paths that are kept"
	// ReasonUnderKept: the path would be made inside a directory that would
	// replace a kept file or link.
	ReasonUnderKept = "a kept path above it is not a directory"
)

// Kept is a path a safe restore leaves as it is, and why (one of the
// Reason constants).
type Kept struct {
	Path   string
	Reason string
}

// Safe returns the part of plan that restores only what agents changed,
// and the paths of plan it keeps instead, in plan order. agents holds, for
// each path, the states (manifest.Entry.StateID; the zero ID for absence)
// that agents left it in since the snapshot restored to. A change is made
// when the path's current state (the Old side of the change, or absence
// for an addition) is one of them, and kept otherwise. Then the tree is
// kept whole: a directory is deleted or replaced only when every path
// below it that the plan changes is restored (and then also when no agent
// state says so, since all it held was the agents'), nothing is made under
// a kept file or link that the snapshot has as a directory, and a
// directory the snapshot has that is missing now is made when a path
// below it is restored. Skipped paths stay as they are in plan.
func Safe(plan Plan, agents map[string][]cas.ID) (Plan, []Kept) {
	reasons := make([]string, len(plan.Changes)) // "": restored
	for i, c := range plan.Changes {
		var current cas.ID
		if c.Status != manifest.Added {
			current = c.Old.StateID()
		}
		switch states := agents[c.Path]; {
		case slices.Contains(states, current):
		case len(states) > 0:
			reasons[i] = ReasonChangedSince
		default:
			reasons[i] = ReasonNotAgent
		}
	}
	keepUnderKept(plan.Changes, reasons)
	settleDirs(plan.Changes, reasons)
	out := Plan{Changes: []manifest.Change{}, Skipped: plan.Skipped}
	kept := []Kept{}
	for i, c := range plan.Changes {
		if reasons[i] == "" {
			out.add(c)
		} else {
			kept = append(kept, Kept{Path: c.Path, Reason: reasons[i]})
		}
	}
	return out, kept
}

// keepUnderKept keeps every change below a kept change that would replace
// a file or link with a directory: the file or link stays, so nothing can
// be made inside it. Changes are in manifest.Diff order, parents first.
func keepUnderKept(changes []manifest.Change, reasons []string) {
	var blocked []string
	for i, c := range changes {
		for _, b := range blocked {
			if strings.HasPrefix(c.Path, b+"/") {
				reasons[i] = ReasonUnderKept
				break
			}
		}
		if reasons[i] != "" && c.Status == manifest.TypeChanged && c.New.Kind == manifest.KindDir {
			blocked = append(blocked, c.Path)
		}
	}
}

// settleDirs decides the directories from what is below them, children
// first: a directory to delete or replace is kept when it holds a kept
// change and restored when everything it holds is restored; a missing
// directory is made when something below it is restored.
func settleDirs(changes []manifest.Change, reasons []string) {
	below := map[string]int{}      // changes below a path
	keptBelow := map[string]bool{} // a kept change is below a path
	restoredBelow := map[string]bool{}
	for i := len(changes) - 1; i >= 0; i-- {
		c := changes[i]
		switch {
		case c.Status != manifest.Added && c.Old.Kind == manifest.KindDir:
			if keptBelow[c.Path] {
				reasons[i] = ReasonHoldsKept
			} else if below[c.Path] > 0 {
				reasons[i] = ""
			}
		case c.Status == manifest.Added && c.New.Kind == manifest.KindDir && restoredBelow[c.Path]:
			reasons[i] = ""
		}
		for d := path.Dir(c.Path); d != "."; d = path.Dir(d) {
			below[d]++
			if reasons[i] != "" {
				keptBelow[d] = true
			} else {
				restoredBelow[d] = true
			}
		}
	}
}
