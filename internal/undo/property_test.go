package undo

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/internal/testtree"
)

// history makes random trees: a turn's start, its end, and a working tree
// changed since, over a few paths, with text files of unique lines.
type history struct {
	r     *rand.Rand
	lines int // lines made so far, each unique
}

// leaves are the paths a random tree may hold; "d" may instead be a
// file or link itself (then nothing is below it).
var leaves = []string{"a", "b", "d/x", "d/y", "d/e/z"}

// tree returns a random tree.
func (h *history) tree() tree {
	t := tree{}
	for _, p := range leaves {
		if e, ok := h.entry(); ok {
			t[p] = e
		}
	}
	if h.r.IntN(5) == 0 {
		for p := range t {
			if strings.HasPrefix(p, "d/") {
				delete(t, p)
			}
		}
		t["d"], _ = h.entry()
	}
	return t
}

// entry returns a random state: nothing, a text file, a binary file or
// a link.
func (h *history) entry() (ent, bool) {
	switch h.r.IntN(8) {
	case 0, 1:
		return ent{}, false
	case 2:
		return ent{Data: fmt.Sprintf("\x00bin %d", h.r.IntN(2))}, true
	case 3:
		return ent{Link: fmt.Sprintf("to%d", h.r.IntN(2))}, true
	}
	var b strings.Builder
	for range 1 + h.r.IntN(6) {
		b.WriteString(h.line())
	}
	return ent{Data: b.String(), Exec: h.r.IntN(4) == 0}, true
}

// line returns a new unique line.
func (h *history) line() string {
	h.lines++
	return fmt.Sprintf("line %d\n", h.lines)
}

// change returns t with some paths changed: text files edited line by
// line, other entries replaced, added or removed.
func (h *history) change(t tree) tree {
	out := testtree.Edit(t, nil)
	if h.r.IntN(6) == 0 {
		return h.tree()
	}
	for _, p := range slices.Sorted(maps.Keys(t)) { // in order: the same seed, the same history
		e := t[p]
		switch {
		case h.r.IntN(2) == 0:
		case e.Link == "" && !strings.HasPrefix(e.Data, "\x00") && h.r.IntN(3) != 0:
			out[p] = ent{Data: h.editLines(e.Data), Exec: e.Exec != (h.r.IntN(5) == 0)}
		case h.r.IntN(2) == 0:
			delete(out, p)
		default:
			out[p], _ = h.entry()
		}
	}
	if _, ok := out["d"]; !ok && h.r.IntN(3) == 0 {
		out["d/new"] = ent{Data: h.line()}
	}
	return out
}

// editLines inserts, deletes or replaces one or two lines of text.
func (h *history) editLines(text string) string { return testtree.EditLines(h.r, text, h.line) }

// leavesOf returns the files and links of trees.
func leavesOf(trees ...tree) []string {
	var out []string
	for _, t := range trees {
		for p, e := range t {
			if !e.Dir && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestUndoProperty: over random histories, after an undo every file and
// link is in S's state where reverted (and only where W held E's or S's),
// merged where merged, and W's everywhere else: nothing a person made is
// overwritten unless the undo merged it in.
func TestUndoProperty(t *testing.T) {
	h := &history{r: rand.New(rand.NewPCG(7, 8))}
	for iter := range 300 {
		start := h.tree()
		end := h.change(start)
		work := h.change(end)
		plan, got := undoCase{start: start, end: end, work: work}.run(t)
		start, end, work = testtree.WithDirs(start), testtree.WithDirs(end), testtree.WithDirs(work)
		for _, p := range leavesOf(start, end, work, got) {
			var want ent
			var ok bool
			switch {
			case slices.Contains(plan.Reverted, p):
				if work[p] != end[p] && work[p] != start[p] {
					t.Fatalf("iteration %d: %s reverted, but changed since the turn", iter, p)
				}
				want, ok = start[p]
			case slices.Contains(plan.Merged, p):
				want, ok = got[p], true
				checkMerged(t, start[p].Data, end[p].Data, work[p].Data, got[p].Data)
			default:
				want, ok = work[p]
			}
			if g, gok := got[p]; gok != ok || g != want {
				t.Fatalf("iteration %d: %s is %+v (%v), want %+v (%v)\nstart %v\nend %v\nwork %v\nplan %+v",
					iter, p, g, gok, want, ok, start, end, work, plan)
			}
		}
	}
}

// checkMerged checks, for texts of unique lines, that merged holds W's
// lines less those the turn added, and the lines the turn deleted: the
// person's edits are kept and the turn's undone. (Merging the turn back
// in does not always give W again: where the person made the same change
// as the undo, say deleted a line the turn added, nothing tells the two
// apart afterwards.)
func checkMerged(t *testing.T, s, e, w, merged string) {
	t.Helper()
	in := func(text, line string) bool { return strings.Contains("\n"+text, "\n"+line) }
	want := map[string]bool{}
	for _, l := range strings.SplitAfter(w+s, "\n") {
		turnAdded := in(e, l) && !in(s, l)
		turnDeleted := in(s, l) && !in(e, l)
		personDeleted := in(e, l) && !in(w, l)
		if l != "" && (in(w, l) || turnDeleted) && !turnAdded && !personDeleted {
			want[l] = true
		}
	}
	lines := strings.SplitAfter(merged, "\n")
	lines = lines[:len(lines)-1]
	got := map[string]bool{}
	for _, l := range lines {
		got[l] = true
	}
	if len(got) != len(lines) || !maps.Equal(got, want) {
		t.Errorf("S %q E %q W %q: merged %q", s, e, w, merged)
	}
}
