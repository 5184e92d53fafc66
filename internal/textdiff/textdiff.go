package textdiff

import (
	"bytes"
	"fmt"
	"strings"
)

// contextLines is how many unchanged lines a hunk shows around its
// changes, as diff -u and git do by default.
const contextLines = 3

// funcNameLen is the most bytes of a hunk's function line that its header
// shows (git's buffer for it).
const funcNameLen = 80

// Result is the difference between two contents.
type Result struct {
	// Patch is the unified diff from the old content to the new one; empty
	// when they are equal, and always empty from Count.
	Patch string
	// Insertions and Deletions count the lines the patch adds and removes.
	Insertions, Deletions int64
}

// Unified returns the patch from old to new, its "---" and "+++" lines
// naming them oldLabel and newLabel as they are (git uses "a/path",
// "b/path" and "/dev/null" for a missing side; see QuotePath), with its
// line counts: git diff's patch and counts (see the package's
// Vocabulary).
func Unified(oldLabel, newLabel string, old, new []byte) Result {
	d := diffLines(old, new)
	r := d.counts()
	if r.Insertions == 0 && r.Deletions == 0 {
		return r
	}
	d.compact()
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", oldLabel, newLabel)
	d.writeHunks(&b)
	r.Patch = b.String()
	return r
}

// Count returns the lines inserted and deleted from old to new, as
// Unified counts them, without the patch.
func Count(old, new []byte) Result {
	return diffLines(old, new).counts()
}

// lineDiff is the line diff of two contents: their lines, and which of
// them the diff deletes (a) and inserts (b).
type lineDiff struct {
	a, b side
}

// side is one content of a diff: its lines and which of them changed.
// changed has a false sentinel before the first line and after the last.
type side struct {
	lines   [][]byte
	changed []bool
}

// isChanged reports whether line i changed; the lines just outside the
// content (-1 and len(lines)) never did.
func (s *side) isChanged(i int) bool { return s.changed[i+1] }

func (s *side) setChanged(i int, v bool) { s.changed[i+1] = v }

func newSide(content []byte) side {
	lines := splitLines(content)
	return side{lines: lines, changed: make([]bool, len(lines)+2)}
}

// diffLines finds the line diff from old to new as git's xdiff does: the
// lines both share at their start and end are left out, then the lines
// xdiff sets aside as changed (see discard), and the rest is searched as
// git searches it (searchLikeGit). So a small edit of a large content
// costs little more than comparing its bytes.
func diffLines(old, new []byte) *lineDiff {
	d := &lineDiff{a: newSide(old), b: newSide(new)}
	a, b := d.a.lines, d.b.lines
	head := 0
	for head < len(a) && head < len(b) && bytes.Equal(a[head], b[head]) {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && bytes.Equal(a[len(a)-1-tail], b[len(b)-1-tail]) {
		tail++
	}
	in := newInterner(len(a) - head - tail)
	ta, tb := in.tokens(a[head:len(a)-tail]), in.tokens(b[head:len(b)-tail])
	keptA, keptB := discard(ta, occurrences(in, b), len(a)), discard(tb, occurrences(in, a), len(b))
	changedA, changedB := searchLikeGit(pick(ta, keptA), pick(tb, keptB))
	for k, c := range changedA {
		d.a.setChanged(head+keptA[k], c)
	}
	for k, c := range changedB {
		d.b.setChanged(head+keptB[k], c)
	}
	markDiscarded(&d.a, head, len(ta), keptA)
	markDiscarded(&d.b, head, len(tb), keptB)
	return d
}

// occurrences counts how often each line of in occurs in lines.
func occurrences(in *interner, lines [][]byte) []int {
	n := make([]int, len(in.first))
	for _, l := range lines {
		if t, ok := in.number(l); ok {
			n[t]++
		}
	}
	return n
}

// The limits of git's discarding of lines (xdiff/xprepare.c).
const (
	maxEqLimit    = 1024 // the most occurrences in the other content that make a line common
	simscanWindow = 100  // how far discard looks around a common line
	kpdisRun      = 4    // a common line goes when under 1 in 4 lines around it match
)

// discard returns the indices of the lines of tokens that the search
// considers, as git's xdiff chooses them (xdl_cleanup_records): not a
// line that the other content lacks (other gives each token's count
// there), nor a line common there (as often as the square root of size,
// the lines of its own content, or 1024 times) amid lines mostly without
// a match. Those are changed without a search; the first kind could not
// be kept anyway, the second makes git's diff longer than the shortest at
// times, and so this one.
func discard(tokens, other []int, size int) []int {
	limit := min(bogoSqrt(size), maxEqLimit)
	kind := make([]byte, len(tokens)) // 0: no match, 1: a match, 2: common
	for i, t := range tokens {
		switch n := other[t]; {
		case n == 0:
		case n >= limit:
			kind[i] = 2
		default:
			kind[i] = 1
		}
	}
	var kept []int
	for i, k := range kind {
		if k == 1 || k == 2 && !amidUnmatched(kind, i) {
			kept = append(kept, i)
		}
	}
	return kept
}

// amidUnmatched reports whether the common line i sits among lines that
// mostly have no match (git's xdl_clean_mmatch): the runs of lines
// without a match or common on both sides of it, within simscanWindow,
// each hold a line without a match, and common lines are under a
// kpdisRun-th of them.
func amidUnmatched(kind []byte, i int) bool {
	lo, hi := max(i-simscanWindow, 0), min(i+simscanWindow, len(kind)-1)
	run := func(step, stop int) (none, common int) {
		common = 1
		for j := i + step; (step < 0 && j >= stop) || (step > 0 && j <= stop); j += step {
			switch kind[j] {
			case 0:
				none++
			case 2:
				common++
			default:
				return none, common
			}
		}
		return none, common
	}
	noneBefore, commonBefore := run(-1, lo)
	if noneBefore == 0 {
		return false
	}
	noneAfter, commonAfter := run(1, hi)
	if noneAfter == 0 {
		return false
	}
	common := commonBefore + commonAfter
	return common*kpdisRun < common+noneBefore+noneAfter
}

// bogoSqrt is git's rough square root: the power of two whose square is
// the next power of four above n.
func bogoSqrt(n int) int {
	i := 1
	for ; n > 0; n >>= 2 {
		i <<= 1
	}
	return i
}

// pick returns tokens[k] for each k of indices.
func pick(tokens, indices []int) []int {
	out := make([]int, len(indices))
	for i, k := range indices {
		out[i] = tokens[k]
	}
	return out
}

// markDiscarded marks as changed the lines of s from head on, n of them,
// that kept does not list.
func markDiscarded(s *side, head, n int, kept []int) {
	k := 0
	for i := range n {
		if k < len(kept) && kept[k] == i {
			k++
			continue
		}
		s.setChanged(head+i, true)
	}
}

// counts returns the lines the diff inserts and deletes.
func (d *lineDiff) counts() Result {
	var r Result
	for i := range d.a.lines {
		if d.a.isChanged(i) {
			r.Deletions++
		}
	}
	for j := range d.b.lines {
		if d.b.isChanged(j) {
			r.Insertions++
		}
	}
	return r
}

// change is one run of changed lines: del lines of a from line i deleted
// and ins lines of b from line j inserted in their place.
type change struct{ i, del, j, ins int }

// changes lists the diff's runs of changed lines, in order.
func (d *lineDiff) changes() []change {
	var out []change
	i, j := 0, 0
	for i < len(d.a.lines) || j < len(d.b.lines) {
		if !d.a.isChanged(i) && !d.b.isChanged(j) {
			i, j = i+1, j+1
			continue
		}
		c := change{i: i, j: j}
		for d.a.isChanged(i) {
			i++
		}
		for d.b.isChanged(j) {
			j++
		}
		c.del, c.ins = i-c.i, j-c.j
		out = append(out, c)
	}
	return out
}

// writeHunks writes the diff's hunks as git does: changes at most twice
// the context apart share a hunk, whose header names the nearest line
// above it that starts with a letter, '_' or '$' (git's default function
// line).
func (d *lineDiff) writeHunks(w *strings.Builder) {
	cs := d.changes()
	fn, searched := "", -1 // the function line so far, and the line searched up to
	for len(cs) > 0 {
		n := 1
		for n < len(cs) && cs[n].i-(cs[n-1].i+cs[n-1].del) <= 2*contextLines {
			n++
		}
		first, last := cs[0], cs[n-1]
		cs = cs[n:]
		ai := max(first.i-contextLines, 0)
		aEnd := min(last.i+last.del+contextLines, len(d.a.lines))
		bj := max(first.j-contextLines, 0)
		bEnd := min(last.j+last.ins+contextLines, len(d.b.lines))
		fmt.Fprintf(w, "@@ -%s +%s @@", hunkRange(ai, aEnd-ai), hunkRange(bj, bEnd-bj))
		if l, ok := d.a.funcLine(ai-1, searched); ok {
			fn = l
		}
		searched = ai - 1
		if fn != "" {
			w.WriteString(" " + fn)
		}
		w.WriteByte('\n')
		i, j := ai, bj
		for i < aEnd || j < bEnd {
			switch {
			case i < aEnd && d.a.isChanged(i):
				writeLine(w, '-', d.a.lines[i])
				i++
			case j < bEnd && d.b.isChanged(j):
				writeLine(w, '+', d.b.lines[j])
				j++
			default:
				writeLine(w, ' ', d.a.lines[i])
				i, j = i+1, j+1
			}
		}
	}
}

// hunkRange is one side of a hunk header: the first line (1-based; for
// no lines, the line before them) and the count, left out when it is 1.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprint(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// writeLine writes one line of a hunk, marked, and git's note after a
// last line without a newline.
func writeLine(w *strings.Builder, mark byte, line []byte) {
	w.WriteByte(mark)
	w.Write(line)
	if !bytes.HasSuffix(line, []byte("\n")) {
		w.WriteString("\n\\ No newline at end of file\n")
	}
}

// funcLine is the nearest line at or above line i and below line stop
// that starts with a letter, '_' or '$' (git's default function line),
// cut to funcNameLen bytes and stripped of trailing white space; false
// when there is none. A hunk whose search finds none keeps the previous
// hunk's function line, as git's does, so each line is searched once.
func (s *side) funcLine(i, stop int) (string, bool) {
	for ; i > stop; i-- {
		l := s.lines[i]
		if len(l) == 0 || !(isAlpha(l[0]) || l[0] == '_' || l[0] == '$') {
			continue
		}
		l = l[:min(len(l), funcNameLen)]
		return string(bytes.TrimRight(l, " \t\n\v\f\r")), true
	}
	return "", false
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
