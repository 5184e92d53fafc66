package undo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/castest"
	"github.com/casckpt/casckpt/internal/restorer"
	"github.com/casckpt/casckpt/internal/testtree"
)

// text returns ten numbered lines, with line i (from 1) replaced by with
// for each pair of edits.
func text(edits ...any) string {
	lines := make([]string, 10)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d\n", i+1)
	}
	for i := 0; i+1 < len(edits); i += 2 {
		lines[edits[i].(int)-1] = edits[i+1].(string) + "\n"
	}
	return strings.Join(lines, "")
}

type (
	tree = testtree.Tree
	ent  = testtree.Entry
)

func f(data string) ent                      { return ent{Data: data} }
func fx(data string) ent                     { return ent{Data: data, Exec: true} }
func link(to string) ent                     { return ent{Link: to} }
func dirEntry() ent                          { return ent{Dir: true} }
func edit(t tree, c tree, rm ...string) tree { return testtree.Edit(t, c, rm...) }

// planCase is an undo and what it must leave: the tree on disk and the
// paths reverted, merged and in conflict (with a word of the reason).
type planCase struct {
	name      string
	c         undoCase
	want      tree
	reverted  []string
	merged    []string
	conflicts map[string]string // path: a word of the reason
}

var (
	// base is a turn's start, turnEdit its end with a line of a.txt
	// changed.
	base     = tree{"a.txt": f(text()), "other": f("other\n")}
	turnEdit = edit(base, tree{"a.txt": f(text(2, "turn 2"))})
)

// planCases are the cases of TestNewPlan.
var planCases = []planCase{
	{name: "a file still as the turn left it goes back",
		c:    undoCase{start: base, end: turnEdit, work: edit(turnEdit, tree{"mine": f("mine\n")})},
		want: edit(base, tree{"mine": f("mine\n")}), reverted: []string{"a.txt"}},
	{name: "a file the turn made is deleted",
		c:    undoCase{start: base, end: edit(base, tree{"new": f("x")}), work: edit(base, tree{"new": f("x")})},
		want: base, reverted: []string{"new"}},
	{name: "a file the turn deleted comes back with its bit",
		c:    undoCase{start: edit(base, tree{"run": fx("#!/bin/sh\n")}), end: base, work: base},
		want: edit(base, tree{"run": fx("#!/bin/sh\n")}), reverted: []string{"run"}},
	{name: "a directory tree the turn made is deleted",
		c: undoCase{start: base, end: edit(base, tree{"d/x": f("x"), "d/e/y": f("y"), "d/empty": dirEntry()}),
			work: edit(base, tree{"d/x": f("x"), "d/e/y": f("y"), "d/empty": dirEntry()})},
		want: base, reverted: []string{"d", "d/e", "d/e/y", "d/empty", "d/x"}},
	{name: "a directory the turn made keeps what was added in it since",
		c: undoCase{start: base, end: edit(base, tree{"d/x": f("x")}),
			work: edit(base, tree{"d/x": f("x"), "d/mine": f("mine")})},
		want: edit(base, tree{"d/mine": f("mine")}), reverted: []string{"d/x"},
		conflicts: map[string]string{"d": "added"}},
	{name: "a directory the turn deleted comes back",
		c:    undoCase{start: edit(base, tree{"d/x": f("x"), "d/e/y": fx("y")}), end: base, work: base},
		want: edit(base, tree{"d/x": f("x"), "d/e/y": fx("y")}), reverted: []string{"d", "d/e", "d/e/y", "d/x"}},
	{name: "lines changed since in another place are merged",
		c:    undoCase{start: base, end: turnEdit, work: edit(turnEdit, tree{"a.txt": f(text(2, "turn 2", 9, "mine 9"))})},
		want: edit(base, tree{"a.txt": f(text(9, "mine 9"))}), merged: []string{"a.txt"}},
	{name: "the same lines changed since conflict",
		c:    undoCase{start: base, end: turnEdit, work: edit(turnEdit, tree{"a.txt": f(text(2, "mine 2"))})},
		want: edit(base, tree{"a.txt": f(text(2, "mine 2"))}), conflicts: map[string]string{"a.txt": "same"}},
	{name: "adjacent lines changed since conflict",
		c:    undoCase{start: base, end: turnEdit, work: edit(turnEdit, tree{"a.txt": f(text(2, "turn 2", 3, "mine 3"))})},
		want: edit(base, tree{"a.txt": f(text(2, "turn 2", 3, "mine 3"))}), conflicts: map[string]string{"a.txt": "adjacent"}},
	{name: "the executable bit merges as lines do",
		c: undoCase{start: base, end: edit(base, tree{"a.txt": fx(text())}),
			work: edit(base, tree{"a.txt": fx(text(5, "mine 5"))})},
		want: edit(base, tree{"a.txt": f(text(5, "mine 5"))}), merged: []string{"a.txt"}},
	{name: "a binary file changed since conflicts",
		c:    undoCase{start: tree{"b": f("\x00a")}, end: tree{"b": f("\x00b")}, work: tree{"b": f("\x00c")}},
		want: tree{"b": f("\x00c")}, conflicts: map[string]string{"b": "binary"}},
	{name: "a link changed since conflicts",
		c:    undoCase{start: tree{"l": link("a")}, end: tree{"l": link("b")}, work: tree{"l": link("c")}},
		want: tree{"l": link("c")}, conflicts: map[string]string{"l": "link"}},
	{name: "a link still as the turn left it goes back",
		c:    undoCase{start: tree{"l": link("a")}, end: tree{"l": link("b")}, work: tree{"l": link("b")}},
		want: tree{"l": link("a")}, reverted: []string{"l"}},
	{name: "a file deleted since conflicts",
		c:    undoCase{start: base, end: turnEdit, work: edit(turnEdit, nil, "a.txt")},
		want: edit(base, nil, "a.txt"), conflicts: map[string]string{"a.txt": "deleted since"}},
	{name: "a file the turn deleted and made again since conflicts",
		c:    undoCase{start: base, end: edit(base, nil, "a.txt"), work: edit(base, tree{"a.txt": f("mine\n")})},
		want: edit(base, tree{"a.txt": f("mine\n")}), conflicts: map[string]string{"a.txt": "created again"}},
	{name: "a file the turn made and changed since conflicts",
		c:    undoCase{start: base, end: edit(base, tree{"new": f("x\n")}), work: edit(base, tree{"new": f("x\ny\n")})},
		want: edit(base, tree{"new": f("x\ny\n")}), conflicts: map[string]string{"new": "created it"}},
	{name: "already as it was is reverted with nothing to write",
		c:    undoCase{start: base, end: turnEdit, work: base},
		want: base, reverted: []string{"a.txt"}},
	{name: "made by the turn and deleted since is reverted",
		c:    undoCase{start: base, end: edit(base, tree{"new": f("x")}), work: base},
		want: base, reverted: []string{"new"}},
	{name: "a file made a directory since conflicts",
		c:    undoCase{start: base, end: turnEdit, work: edit(turnEdit, tree{"a.txt/x": f("x")}, "a.txt")},
		want: edit(base, tree{"a.txt/x": f("x")}, "a.txt"), conflicts: map[string]string{"a.txt": "now a directory"}},
	{name: "a file the turn made a directory comes back",
		c:    undoCase{start: tree{"p": f("p\n")}, end: tree{"p/x": f("x"), "p/y/z": f("z")}, work: tree{"p/x": f("x"), "p/y/z": f("z")}},
		want: tree{"p": f("p\n")}, reverted: []string{"p", "p/x", "p/y", "p/y/z"}},
	{name: "a directory the turn made a file comes back",
		c:    undoCase{start: tree{"p/x": f("x"), "p/y/z": f("z")}, end: tree{"p": f("p\n")}, work: tree{"p": f("p\n")}},
		want: tree{"p/x": f("x"), "p/y/z": f("z")}, reverted: []string{"p", "p/x", "p/y", "p/y/z"}},
	{name: "below a file left alone nothing is made",
		c:         undoCase{start: tree{"p/x": f("x"), "p/y/z": f("z")}, end: tree{"p": f("p\n")}, work: tree{"p": f("mine\n")}},
		want:      tree{"p": f("mine\n")},
		conflicts: map[string]string{"p": "made it a file", "p/x": "in p", "p/y": "in p", "p/y/z": "in p/y"}},
	{name: "a file the turn deleted in a directory deleted since conflicts",
		c:    undoCase{start: tree{"d/x": f("x"), "d/k": f("k")}, end: tree{"d/k": f("k")}, work: tree{"o": f("o")}},
		want: tree{"o": f("o")}, conflicts: map[string]string{"d/x": "gone"}},
	{name: "an excluded path is left alone",
		c: undoCase{start: base, end: turnEdit, work: edit(turnEdit, nil, "a.txt"),
			disk: tree{"a.txt": f("big\n")}, excluded: []string{"a.txt"}},
		want: edit(base, tree{"a.txt": f("big\n")}), conflicts: map[string]string{"a.txt": "excluded"}},
	{name: "a directory the turn made holding an excluded entry stays",
		c: undoCase{start: base, end: edit(base, tree{"d/x": f("x")}), work: edit(base, tree{"d/x": f("x")}),
			disk: tree{"d/x.log": f("log")}, excluded: []string{"d/x.log"}},
		want: edit(base, tree{"d/x.log": f("log")}), reverted: []string{"d/x"}, conflicts: map[string]string{"d": "added"}},
	{name: "a file changed after the scan is not merged",
		c: undoCase{start: base, end: turnEdit, work: edit(turnEdit, tree{"a.txt": f(text(2, "turn 2", 9, "mine 9"))}),
			disk: tree{"a.txt": f("later\n")}},
		want: edit(base, tree{"a.txt": f("later\n")}), conflicts: map[string]string{"a.txt": "during the undo"}},
}

func TestNewPlan(t *testing.T) {
	for _, tc := range planCases {
		t.Run(tc.name, func(t *testing.T) {
			plan, got := tc.c.run(t)
			if d := testtree.Equal(testtree.WithDirs(tc.want), got); d != "" {
				t.Errorf("tree on disk: %s\ngot  %v\nwant %v", d, got, tc.want)
			}
			checkPaths(t, "reverted", plan.Reverted, tc.reverted)
			checkPaths(t, "merged", plan.Merged, tc.merged)
			if plan.Conflicts == nil {
				t.Error("conflicts is nil")
			}
			conflicts := []string{}
			for _, c := range plan.Conflicts {
				conflicts = append(conflicts, c.Path)
				if !strings.Contains(c.Reason, tc.conflicts[c.Path]) {
					t.Errorf("conflict %s: reason %q, want one with %q", c.Path, c.Reason, tc.conflicts[c.Path])
				}
			}
			var want []string
			for p := range tc.conflicts {
				want = append(want, p)
			}
			slices.Sort(want)
			checkPaths(t, "conflicts", conflicts, want)
		})
	}
}

// checkPaths fails t unless got lists the paths of want, in order.
func checkPaths(t *testing.T, what string, got, want []string) {
	t.Helper()
	if got == nil {
		t.Errorf("%s is nil", what)
	}
	if len(got) != len(want) || (len(want) > 0 && !slices.Equal(got, want)) {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

// TestNewPlanMissingData: a tree the undo needs that the store lacks
// fails the plan; a chunk it lacks fails the verification before any
// write.
func TestNewPlanMissingData(t *testing.T) {
	ctx := context.Background()
	m := castest.NewMemory()
	start := putTree(t, m, tree{"a": f("start\n")})
	end := putTree(t, m, tree{"a": f("end\n")})
	work := putTree(t, m, tree{"a": f("end\n")})
	in := Input{Start: start, End: end, Work: work, ReadWork: func(string) ([]byte, error) { return nil, errors.New("not read") }}
	plan, err := NewPlan(ctx, m, in)
	if err != nil {
		t.Fatal(err)
	}
	m.Delete(cas.Sum(cas.KindChunk, []byte("start\n")))
	if _, err := restorer.Verify(ctx, plan.Content(m), plan.Restore); !errors.Is(err, cas.ErrNotFound) {
		t.Errorf("verify: %v, want cas.ErrNotFound", err)
	}
	m.Delete(start)
	if _, err := NewPlan(ctx, m, in); !errors.Is(err, cas.ErrNotFound) {
		t.Errorf("plan without the start tree: %v, want cas.ErrNotFound", err)
	}
}
