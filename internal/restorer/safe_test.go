package restorer

import (
	"slices"
	"testing"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/manifest"
)

// fc is a file holding s.
func fc(s string) manifest.Entry {
	return manifest.Entry{Kind: manifest.KindFile, Size: int64(len(s)), Chunks: []cas.ID{cas.Sum(cas.KindChunk, []byte(s))}}
}

func fcExec(s string) manifest.Entry { e := fc(s); e.Exec = true; return e }
func ln(target string) manifest.Entry {
	return manifest.Entry{Kind: manifest.KindSymlink, Target: target, Size: int64(len(target))}
}

// st are the states of entries; gone is absence.
func st(es ...manifest.Entry) []cas.ID {
	out := []cas.ID{}
	for _, e := range es {
		out = append(out, e.StateID())
	}
	return out
}

var gone = []cas.ID{{}}

// safeCases are Safe's table: the changes of a plan, the agents' states,
// and the paths it restores and keeps.
var safeCases = []struct {
	name    string
	changes []manifest.Change
	agents  map[string][]cas.ID
	plan    []string
	kept    []Kept
}{{
	name:    "a file still as the agent left it is restored",
	changes: []manifest.Change{modified("a", fc("agent"), fc("snap"))}, agents: map[string][]cas.ID{"a": st(fc("agent"))},
	plan: []string{"a"},
}, {
	name:    "a file changed since the agent's write is kept",
	changes: []manifest.Change{modified("a", fc("person"), fc("snap"))}, agents: map[string][]cas.ID{"a": st(fc("agent"))},
	kept: []Kept{{"a", ReasonChangedSince}},
}, {
	name:    "a file no agent changed is kept",
	changes: []manifest.Change{modified("a", fc("person"), fc("snap"))}, agents: map[string][]cas.ID{"b": st(fc("person"))},
	kept: []Kept{{"a", ReasonNotAgent}},
}, {
	name:    "any of the agents' states will do (a turn's end, a recorded write)",
	changes: []manifest.Change{modified("a", fc("write"), fc("snap"))}, agents: map[string][]cas.ID{"a": st(fc("turn"), fc("write"))},
	plan: []string{"a"},
}, {
	name:    "the executable bit is part of the state",
	changes: []manifest.Change{modified("x", fcExec("a"), fc("a"))}, agents: map[string][]cas.ID{"x": st(fc("a"))},
	kept: []Kept{{"x", ReasonChangedSince}},
}, {
	name:    "a link is its target",
	changes: []manifest.Change{typeChanged("l", ln("t"), fc("s")), typeChanged("m", ln("u"), fc("s"))},
	agents:  map[string][]cas.ID{"l": st(ln("t")), "m": st(ln("t"))},
	plan:    []string{"l"}, kept: []Kept{{"m", ReasonChangedSince}},
}, {
	name:    "files the agent deleted come back; those a person deleted do not",
	changes: []manifest.Change{added("a", fc("s")), added("p", fc("s"))}, agents: map[string][]cas.ID{"a": gone, "p": st(fc("agent"))},
	plan: []string{"a"}, kept: []Kept{{"p", ReasonChangedSince}},
}, {
	name:    "a file the agent created goes; one a person created stays",
	changes: []manifest.Change{deleted("n", fc("new")), deleted("p", fc("mine"))}, agents: map[string][]cas.ID{"n": st(fc("new"))},
	plan: []string{"n"}, kept: []Kept{{"p", ReasonNotAgent}},
}, {
	name: "a directory the agent made that holds a person's file stays, with that file",
	changes: []manifest.Change{deleted("d", dir()), deleted("d/agent", fc("a")), deleted("d/person", fc("p")),
		deleted("d/sub", dir()), deleted("d/sub/agent", fc("a"))},
	agents: map[string][]cas.ID{"d": st(dir()), "d/agent": st(fc("a")), "d/sub/agent": st(fc("a"))},
	plan:   []string{"d/agent", "d/sub", "d/sub/agent"}, kept: []Kept{{"d", ReasonHoldsKept}, {"d/person", ReasonNotAgent}},
}, {
	name:    "a directory holding only the agents' files goes, though no state names it",
	changes: []manifest.Change{deleted("d", dir()), deleted("d/x", fc("x"))}, agents: map[string][]cas.ID{"d/x": st(fc("x"))},
	plan: []string{"d", "d/x"},
}, {
	name:    "an empty directory a person made stays",
	changes: []manifest.Change{deleted("e", dir())},
	kept:    []Kept{{"e", ReasonNotAgent}},
}, {
	name:    "nested directories keep what holds a kept file",
	changes: []manifest.Change{deleted("x", dir()), deleted("x/y", dir()), deleted("x/y/h", fc("h")), deleted("x/z", fc("z"))},
	agents:  map[string][]cas.ID{"x": st(dir()), "x/y": st(dir()), "x/z": st(fc("z"))},
	plan:    []string{"x/z"}, kept: []Kept{{"x", ReasonHoldsKept}, {"x/y", ReasonHoldsKept}, {"x/y/h", ReasonNotAgent}},
}, {
	name:    "a directory the agent deleted comes back whole",
	changes: []manifest.Change{added("d", dir()), added("d/a", fc("a")), added("d/e", dir())},
	agents:  map[string][]cas.ID{"d": gone, "d/a": gone, "d/e": gone},
	plan:    []string{"d", "d/a", "d/e"},
}, {
	name:    "a missing directory is made for what is restored in it",
	changes: []manifest.Change{added("d", dir()), added("d/a", fc("a")), added("d/p", fc("p")), added("d/q", dir())},
	agents:  map[string][]cas.ID{"d/a": gone},
	plan:    []string{"d", "d/a"}, kept: []Kept{{"d/p", ReasonNotAgent}, {"d/q", ReasonNotAgent}},
}, {
	name:    "nothing is made inside a kept file",
	changes: []manifest.Change{typeChanged("p", fc("person"), dir()), added("p/x", fc("x")), added("p/y", dir()), added("p/y/z", fc("z"))},
	agents:  map[string][]cas.ID{"p/x": gone, "p/y": gone, "p/y/z": gone},
	kept:    []Kept{{"p", ReasonNotAgent}, {"p/x", ReasonUnderKept}, {"p/y", ReasonUnderKept}, {"p/y/z", ReasonUnderKept}},
}, {
	name:    "an agent's file where the snapshot has a directory is replaced",
	changes: []manifest.Change{typeChanged("p", fc("agent"), dir()), added("p/x", fc("x")), added("p/y", fc("y"))},
	agents:  map[string][]cas.ID{"p": st(fc("agent")), "p/x": gone},
	plan:    []string{"p", "p/x"}, kept: []Kept{{"p/y", ReasonNotAgent}},
}, {
	name:    "a directory where the snapshot has a file is replaced only when all it holds is the agents'",
	changes: []manifest.Change{typeChanged("q", dir(), fc("s")), deleted("q/a", fc("a")), deleted("q/h", fc("h")), typeChanged("r", dir(), fc("s")), deleted("r/a", fc("a"))},
	agents:  map[string][]cas.ID{"q": st(dir()), "q/a": st(fc("a")), "r/a": st(fc("a"))},
	plan:    []string{"q/a", "r", "r/a"}, kept: []Kept{{"q", ReasonHoldsKept}, {"q/h", ReasonNotAgent}},
}}

func TestSafe(t *testing.T) {
	for _, tc := range safeCases {
		t.Run(tc.name, func(t *testing.T) {
			plan, kept := Safe(NewPlan(tc.changes, nil, nil, nil), tc.agents)
			if got := paths(plan.Changes); !slices.Equal(got, orEmpty(tc.plan)) {
				t.Errorf("plan %q, want %q", got, tc.plan)
			}
			if !slices.Equal(kept, orEmptyKept(tc.kept)) {
				t.Errorf("kept %q, want %q", kept, tc.kept)
			}
		})
	}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func orEmptyKept(k []Kept) []Kept {
	if k == nil {
		return []Kept{}
	}
	return k
}

// Safe counts what it keeps of the plan and passes Skipped on.
func TestSafeCounts(t *testing.T) {
	in := NewPlan([]manifest.Change{
		modified("a", fc("agent"), fc("snapshot")), modified("b", fc("person"), fc("other")),
		deleted("c", fc("agent")), deleted("d", fc("person")), added("l", ln("t")),
	}, nil, nil, nil)
	in.Skipped = []string{"cache"}
	plan, kept := Safe(in, map[string][]cas.ID{"a": st(fc("agent")), "c": st(fc("agent")), "l": gone})
	if plan.Written != 2 || plan.Deleted != 1 || plan.Bytes != int64(len("snapshot")) || !slices.Equal(plan.Skipped, []string{"cache"}) || len(kept) != 2 {
		t.Fatalf("plan %+v, kept %v", plan, kept)
	}
}
