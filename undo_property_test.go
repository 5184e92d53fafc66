package casckpt_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/testtree"
	"github.com/casckpt/casckpt/internal/textdiff"
)

// undoPaths are the files a random history may hold: text files of
// unique lines, in nested directories that come and go with them.
var undoPaths = []string{"a.txt", "b.txt", "d/c.txt", "d/e/f.txt", "g/h.txt"}

// turnTrees are a turn's ID and the project's tree at its start and end.
type turnTrees struct {
	id         string
	start, end testtree.Tree
}

// undoHistory makes a random history of agent turns and a person's edits
// in one project: every line it writes is new (unique in the history).
type undoHistory struct {
	t     *testing.T
	r     *rand.Rand
	s     *casckpt.Store
	proj  string
	lines int         // lines written so far
	turns []turnTrees // the ended turns, oldest first
}

// line returns a line never written before.
func (h *undoHistory) line() string {
	h.lines++
	return fmt.Sprintf("line %d\n", h.lines)
}

// text returns n new lines.
func (h *undoHistory) text(n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(h.line())
	}
	return b.String()
}

// edit makes one random change: a file created, deleted (with the
// directories it leaves empty) or edited line by line.
func (h *undoHistory) edit() {
	p := undoPaths[h.r.IntN(len(undoPaths))]
	full := filepath.Join(h.proj, filepath.FromSlash(p))
	b, err := os.ReadFile(full)
	switch {
	case os.IsNotExist(err):
		testtree.Write(h.t, h.proj, testtree.Tree{p: {Data: h.text(1 + h.r.IntN(8))}})
	case err != nil:
		h.t.Fatal(err)
	case h.r.IntN(5) == 0:
		if err := os.Remove(full); err != nil {
			h.t.Fatal(err)
		}
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if os.Remove(filepath.Join(h.proj, filepath.FromSlash(d))) != nil {
				break // not empty
			}
		}
	default:
		if err := os.WriteFile(full, []byte(h.editLines(string(b))), 0o644); err != nil {
			h.t.Fatal(err)
		}
	}
}

// editLines inserts, deletes or replaces one or two lines of text.
func (h *undoHistory) editLines(text string) string { return testtree.EditLines(h.r, text, h.line) }

// edits makes from min to max random changes.
func (h *undoHistory) edits(min, max int) {
	for range min + h.r.IntN(max-min+1) {
		h.edit()
	}
}

// snapshot snapshots the project with turn labels and returns its tree.
func (h *undoHistory) snapshot(opts casckpt.SnapshotOptions) testtree.Tree {
	h.t.Helper()
	tree := testtree.Read(h.t, h.proj)
	mustSnapshot(h.t, h.s, h.proj, opts)
	return tree
}

// run makes the history: a few turns, a person's edits before, between
// and after them, and sometimes a last turn still open. A README no one
// edits keeps the first turn from starting on an empty tree, which
// records no snapshot (so that turn would start at its end).
func (h *undoHistory) run() {
	first := testtree.Tree{"README": {Data: "a project\n"}}
	for _, p := range undoPaths {
		first[p] = testtree.Entry{Data: h.text(8)}
	}
	testtree.Write(h.t, h.proj, first)
	h.edits(0, 3) // the person's
	for i := range 1 + h.r.IntN(4) {
		id := fmt.Sprint("t", i+1)
		start := h.snapshot(casckpt.SnapshotOptions{Reason: id + " start", Turn: id})
		h.edits(0, 4) // the agent's
		end := h.snapshot(casckpt.SnapshotOptions{Reason: id + " end", Turn: id, EndTurn: true})
		h.turns = append(h.turns, turnTrees{id: id, start: start, end: end})
		h.edits(0, 2) // the person's
	}
	if h.r.IntN(4) == 0 {
		h.snapshot(casckpt.SnapshotOptions{Reason: "open", Turn: "open"})
		h.edits(1, 2)
	}
}

// TestUndoRevertsOneTurnProperty: over a few hundred random histories of
// agent turns (files created, deleted and edited line by line between a
// snapshot with --turn and one with --end-turn) and a person's edits
// around them, Store.Undo of a random ended turn k, with real files and a
// real store:
//   - reports each path turn k changed (start to end) exactly once, as
//     reverted, merged or a conflict;
//   - touches no other path, and leaves every conflict as it was;
//   - can be taken back: re-applying turn k's changes to the result (per
//     path: the end's state where the result holds the start's, else the
//     three-way merge base start, ours result, theirs end) gives back the
//     pre-undo tree at every reverted or merged path,
//
// except where an edit made after turn k (a person's or a later turn's)
// had already made the very change the undo makes at that path: the path
// was already in the start's state (a file the turn created and someone
// deleted since), or a line the turn added is gone from it since (no
// line the turn deleted can come back: every line is new). There the
// undo has nothing left to take out, so nothing tells the re-application
// that the change it brings back had been undone by hand, and no undo
// can satisfy the property (internal/undo's property test says the
// same). The test checks that it fails at exactly those paths.
func TestUndoRevertsOneTurnProperty(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	r := rand.New(rand.NewPCG(11, 2025))
	counts := map[string]int{}
	histories := 250
	if testing.Short() {
		histories = 60
	}
	for iter := range histories {
		proj, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		h := &undoHistory{t: t, r: r, s: s, proj: proj}
		h.run()
		k := h.turns[r.IntN(len(h.turns))]
		before := testtree.Read(t, proj)
		res, err := s.Undo(ctx, proj, k.id, casckpt.UndoOptions{})
		if err != nil {
			t.Fatalf("iteration %d: undo %s: %v", iter, k.id, err)
		}
		c := undoCase{k: k, changed: changedPaths(k.start, k.end), before: before, after: testtree.Read(t, proj), res: res}
		if msg := c.check(counts); msg != "" {
			t.Fatalf("iteration %d, undo of %s: %s\nstart %v\nend %v\nbefore %v\nafter %v\nresult %+v",
				iter, k.id, msg, k.start, k.end, c.before, c.after, res)
		}
	}
	t.Logf("paths checked: %v", counts)
	for _, what := range []string{"reverted", "merged", "conflict", "same change"} {
		if counts[what] == 0 {
			t.Errorf("no %s path in any history: the histories are too tame", what)
		}
	}
}

// undoCase is one undo: the turn, the tree before and after, the result.
type undoCase struct {
	k             turnTrees
	changed       map[string]bool // the paths the turn changed
	before, after testtree.Tree
	res           casckpt.UndoResult
}

// check returns what is wrong with the undo, or "", counting the paths
// checked by outcome.
func (c undoCase) check(counts map[string]int) string {
	outcome := map[string]string{}
	report := func(what string, paths []string) string {
		for _, p := range paths {
			if o, ok := outcome[p]; ok {
				return fmt.Sprintf("%s reported %s and %s", p, o, what)
			}
			if !c.changed[p] {
				return fmt.Sprintf("%s reported %s, but the turn did not change it", p, what)
			}
			outcome[p] = what
		}
		return ""
	}
	var conflicts []string
	for _, cf := range c.res.Conflicts {
		conflicts = append(conflicts, cf.Path)
	}
	for _, m := range []string{report("reverted", c.res.Reverted), report("merged", c.res.Merged), report("conflict", conflicts)} {
		if m != "" {
			return m
		}
	}
	for _, p := range slices.Sorted(maps.Keys(union(c.before, c.after, c.changed))) {
		if msg := c.checkPath(p, outcome[p], counts); msg != "" {
			return msg
		}
	}
	return ""
}

// checkPath checks one path, given how the undo reported it ("" for
// none).
func (c undoCase) checkPath(p, outcome string, counts map[string]int) string {
	b, bok := c.before[p]
	a, aok := c.after[p]
	switch {
	case outcome == "" && c.changed[p]:
		return p + " changed by the turn, but not reported"
	case outcome == "" || outcome == "conflict":
		if aok != bok || a != b {
			return fmt.Sprintf("%s (%s) touched: %+v (%v), was %+v (%v)", p, or(outcome, "not changed by the turn"), a, aok, b, bok)
		}
		if outcome == "conflict" {
			counts["conflict"]++
		}
		return ""
	}
	got, gok, clean := reapply(c.k.start, c.k.end, c.after, p)
	back := clean && gok == bok && got == b
	same := sameChange(c.k.start, c.k.end, c.before, p)
	switch {
	case same && back:
		return fmt.Sprintf("%s (%s): a later edit made the undo's change, yet re-applying the turn gives it back", p, outcome)
	case !same && !back:
		return fmt.Sprintf("%s (%s): re-applying the turn gives %+v (%v, clean %v), want the pre-undo %+v (%v)",
			p, outcome, got, gok, clean, b, bok)
	case same:
		counts["same change"]++
	default:
		counts[outcome]++
	}
	return ""
}

// changedPaths are the paths whose state differs between two trees (read
// with their directories).
func changedPaths(x, y testtree.Tree) map[string]bool {
	out := map[string]bool{}
	for p := range union(x, y, nil) {
		if !sameState(x, y, p) {
			out[p] = true
		}
	}
	return out
}

// union returns the paths of two trees and of extra.
func union(x, y testtree.Tree, extra map[string]bool) map[string]bool {
	out := maps.Clone(extra)
	if out == nil {
		out = map[string]bool{}
	}
	for p := range x {
		out[p] = true
	}
	for p := range y {
		out[p] = true
	}
	return out
}

// or returns s, or alt when s is empty.
func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// sameState reports whether two trees hold the same state at p.
func sameState(x, y testtree.Tree, p string) bool {
	ex, okx := x[p]
	ey, oky := y[p]
	return okx == oky && ex == ey
}

// reapply re-applies at p the turn's changes from start to end to tree
// w: end's state where w holds start's, the three-way merge (base start,
// ours w, theirs end) where all three hold files; clean is false when
// neither applies or the merge conflicts.
func reapply(start, end, w testtree.Tree, p string) (e testtree.Entry, ok, clean bool) {
	if sameState(w, start, p) {
		e, ok = end[p]
		return e, ok, true
	}
	if !isFile(start, p) || !isFile(end, p) || !isFile(w, p) { // no executable bits: none is set
		return testtree.Entry{}, false, false
	}
	merged, clean := textdiff.Merge([]byte(start[p].Data), []byte(w[p].Data), []byte(end[p].Data))
	return testtree.Entry{Data: string(merged)}, true, clean
}

// isFile reports whether t holds a file at p.
func isFile(t testtree.Tree, p string) bool {
	e, ok := t[p]
	return ok && !e.Dir && e.Link == ""
}

// sameChange reports whether, at a path the turn from start to end
// changed, the tree before the undo already holds the change the undo
// makes, whole (start's state) or in part (a line the turn added is
// gone; a line it deleted cannot come back, every line being new).
func sameChange(start, end, before testtree.Tree, p string) bool {
	if sameState(before, start, p) {
		return true
	}
	if !isFile(start, p) || !isFile(end, p) || !isFile(before, p) {
		return false
	}
	s, e, b := lineSet(start[p].Data), lineSet(end[p].Data), lineSet(before[p].Data)
	for l := range e {
		if !s[l] && !b[l] {
			return true
		}
	}
	return false
}

// lineSet returns the lines of text.
func lineSet(text string) map[string]bool {
	out := map[string]bool{}
	for _, l := range strings.SplitAfter(text, "\n") {
		if l != "" {
			out[l] = true
		}
	}
	return out
}
