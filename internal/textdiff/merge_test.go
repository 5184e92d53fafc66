package textdiff

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// numbered returns lines "<prefix> 1\n" to "<prefix> n\n".
func numbered(prefix string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s %d\n", prefix, i)
	}
	return b.String()
}

// replaceLine returns text with its line i (from 1) replaced by with.
func replaceLine(text string, i int, with string) string {
	lines := strings.SplitAfter(text, "\n")
	lines[i-1] = with
	return strings.Join(lines, "")
}

func TestMerge(t *testing.T) {
	ten := numbered("line", 10)
	for _, tc := range []struct {
		name               string
		base, ours, theirs string
		merged             string
		conflict           bool
	}{
		{name: "both sides in different places", base: ten,
			ours:   replaceLine(ten, 2, "ours 2\n"),
			theirs: replaceLine(ten, 8, "theirs 8\n"),
			merged: replaceLine(replaceLine(ten, 2, "ours 2\n"), 8, "theirs 8\n")},
		{name: "same line changed differently", base: ten,
			ours: replaceLine(ten, 5, "ours 5\n"), theirs: replaceLine(ten, 5, "theirs 5\n"), conflict: true},
		{name: "adjacent lines conflict as in diff3", base: ten,
			ours: replaceLine(ten, 5, "ours 5\n"), theirs: replaceLine(ten, 6, "theirs 6\n"), conflict: true},
		{name: "one line apart merges", base: ten,
			ours: replaceLine(ten, 4, "ours 4\n"), theirs: replaceLine(ten, 6, "theirs 6\n"),
			merged: replaceLine(replaceLine(ten, 4, "ours 4\n"), 6, "theirs 6\n")},
		{name: "identical changes on both sides", base: "a\nb\nc\nd\n",
			ours: "a\nB\nc\nD\n", theirs: "a\nB\nc\nd\n", merged: "a\nB\nc\nD\n"},
		{name: "insertions at the same place conflict", base: "a\nb\n",
			ours: "a\nx\nb\n", theirs: "a\ny\nb\n", conflict: true},
		{name: "the same insertion twice", base: "a\nb\n",
			ours: "a\nx\nb\nc\n", theirs: "a\nx\nb\n", merged: "a\nx\nb\nc\n"},
		{name: "deletion and a distant edit", base: ten,
			ours:   strings.Replace(ten, "line 3\n", "", 1),
			theirs: replaceLine(ten, 9, "theirs 9\n"),
			merged: strings.Replace(replaceLine(ten, 9, "theirs 9\n"), "line 3\n", "", 1)},
		{name: "deletion against an edit of the same line", base: ten,
			ours: strings.Replace(ten, "line 3\n", "", 1), theirs: replaceLine(ten, 3, "theirs 3\n"), conflict: true},
		{name: "ours unchanged", base: "a\nb\n", ours: "a\nb\n", theirs: "x", merged: "x"},
		{name: "theirs unchanged", base: "a\nb\n", ours: "", theirs: "a\nb\n", merged: ""},
		{name: "all empty", merged: ""},
		{name: "empty base, the same text added", ours: "a\n", theirs: "a\n", merged: "a\n"},
		{name: "empty base, different texts added", ours: "a\n", theirs: "b\n", conflict: true},
		{name: "emptied on one side, edited on the other", base: "a\nb\n", ours: "", theirs: "a\nc\n", conflict: true},
		{name: "no newline at the end, edit elsewhere", base: "a\nb\nc\nd",
			ours: "A\nb\nc\nd", theirs: "a\nb\nc\nD", merged: "A\nb\nc\nD"},
		{name: "newline added at the end and an edit at the start", base: "a\nb\nc",
			ours: "a\nb\nc\n", theirs: "A\nb\nc", merged: "A\nb\nc\n"},
		{name: "newline added at the end against a last line edit", base: "a\nb\nc",
			ours: "a\nb\nc\n", theirs: "a\nb\nC", conflict: true},
		{name: "CRLF kept as bytes", base: "a\r\nb\r\nc\r\nd\r\n",
			ours: "A\r\nb\r\nc\r\nd\r\n", theirs: "a\r\nb\r\nc\r\nD\r\n", merged: "A\r\nb\r\nc\r\nD\r\n"},
		{name: "CRLF against LF is a change", base: "a\r\nb\r\n",
			ours: "a\nb\r\n", theirs: "a\r\nB\r\n", conflict: true},
		{name: "appends at the end by both conflict", base: "a\n", ours: "a\nb\n", theirs: "a\nc\n", conflict: true},
		{name: "prepend and append merge", base: "a\nb\nc\n", ours: "0\na\nb\nc\n", theirs: "a\nb\nc\nd\n",
			merged: "0\na\nb\nc\nd\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, swap := range []bool{false, true} {
				ours, theirs := tc.ours, tc.theirs
				if swap {
					ours, theirs = theirs, ours
				}
				merged, clean := Merge([]byte(tc.base), []byte(ours), []byte(theirs))
				if clean == tc.conflict {
					t.Fatalf("swap %v: clean = %v, want %v (merged %q)", swap, clean, !tc.conflict, merged)
				}
				if clean && string(merged) != tc.merged {
					t.Errorf("swap %v: merged\n%q\nwant\n%q", swap, merged, tc.merged)
				}
				if !clean && merged != nil {
					t.Errorf("swap %v: a conflict gave content %q", swap, merged)
				}
			}
		})
	}
}

// edit is one change of a base text: lines [at, at+del) of base replaced
// by ins.
type edit struct {
	at, del int
	ins     []string
}

// applyEdits applies edits, sorted and apart, to base lines.
func applyEdits(base []string, edits []edit) string {
	var b strings.Builder
	i := 0
	for _, e := range edits {
		b.WriteString(strings.Join(base[i:e.at], ""))
		b.WriteString(strings.Join(e.ins, ""))
		i = e.at + e.del
	}
	b.WriteString(strings.Join(base[i:], ""))
	return b.String()
}

// randomEdits returns edits of regions of base lines in [lo, hi), each
// region at least one unchanged line apart from the next, inserting lines
// named after side.
func randomEdits(r *rand.Rand, side string, lo, hi int) []edit {
	var edits []edit
	for at := lo; at <= hi; {
		if r.IntN(3) != 0 {
			at++
			continue
		}
		e := edit{at: at, del: r.IntN(min(3, hi-at) + 1)}
		for range r.IntN(3) {
			e.ins = append(e.ins, fmt.Sprintf("%s %d\n", side, r.Int()))
		}
		if e.del == 0 && len(e.ins) == 0 {
			at++
			continue
		}
		edits = append(edits, e)
		at += e.del + 2 // one unchanged line before the next edit
	}
	return edits
}

// TestMergeDisjointEdits: random edits of a base into ours and theirs, in
// regions at least one unchanged line apart, merge cleanly into the base
// with both sides' edits applied.
func TestMergeDisjointEdits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 2000 {
		n := r.IntN(30)
		base := strings.SplitAfter(numbered("base", n), "\n")
		base = base[:len(base)-1]
		noNewline := n > 0 && r.IntN(4) == 0
		if noNewline {
			base[n-1] = strings.TrimSuffix(base[n-1], "\n")
		}
		// Each side edits its own interleaved regions: split the lines
		// into runs, alternately ours and theirs, a line apart.
		var ours, theirs []edit
		for lo, side := 0, r.IntN(2); lo <= n; side = 1 - side {
			hi := min(n, lo+r.IntN(8))
			if side == 0 {
				ours = append(ours, randomEdits(r, "ours", lo, hi)...)
			} else {
				theirs = append(theirs, randomEdits(r, "theirs", lo, hi)...)
			}
			lo = hi + 2
		}
		if noNewline { // nothing can follow a last line without a newline
			ours, theirs = dropAppends(ours, n), dropAppends(theirs, n)
		}
		all := append(append([]edit{}, ours...), theirs...)
		sortEdits(all)
		b := strings.Join(base, "")
		o, th, want := applyEdits(base, ours), applyEdits(base, theirs), applyEdits(base, all)
		merged, clean := Merge([]byte(b), []byte(o), []byte(th))
		if !clean || string(merged) != want {
			t.Fatalf("iteration %d: clean %v\nbase %q\nours %q\ntheirs %q\nmerged %q\nwant %q", iter, clean, b, o, th, merged, want)
		}
	}
}

// dropAppends drops the edits that insert after the last of n lines.
func dropAppends(edits []edit, n int) []edit {
	var out []edit
	for _, e := range edits {
		if e.at < n {
			out = append(out, e)
		}
	}
	return out
}

// sortEdits sorts edits by position.
func sortEdits(edits []edit) {
	for i := 1; i < len(edits); i++ {
		for j := i; j > 0 && edits[j].at < edits[j-1].at; j-- {
			edits[j], edits[j-1] = edits[j-1], edits[j]
		}
	}
}

// lcsLen is the length of a longest common subsequence, by dynamic
// programming.
func lcsLen(a, b []int) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(cur[j], prev[j+1])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// checkMatch checks that match pairs equal lines of a and b in
// increasing order and keeps as many as a longest common subsequence.
func checkMatch(t *testing.T, a, b, match []int) {
	t.Helper()
	kept, last := 0, -1
	for i, j := range match {
		if j < 0 {
			continue
		}
		if j <= last || j >= len(b) || a[i] != b[j] {
			t.Fatalf("a %v b %v: bad match %v", a, b, match)
		}
		kept, last = kept+1, j
	}
	if want := lcsLen(a, b); kept != want {
		t.Fatalf("a %v b %v: match %v keeps %d lines, a longest common subsequence has %d", a, b, match, kept, want)
	}
}

func TestMatchLinesShortest(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		a, b := make([]int, r.IntN(25)), make([]int, r.IntN(25))
		alphabet := 1 + r.IntN(6)
		for i := range a {
			a[i] = r.IntN(alphabet)
		}
		for i := range b {
			b[i] = r.IntN(alphabet)
		}
		checkMatch(t, a, b, matchLines(a, b))
	}
}

// TestMatchLinesOutOfWork: past the work budget the diff stays correct,
// only longer.
func TestMatchLinesOutOfWork(t *testing.T) {
	a, b := make([]int, 200), make([]int, 200)
	for i := range a {
		a[i], b[i] = i, i
		if i%10 == 0 {
			b[i] = -i - 1
		}
	}
	d := &lineSearch{a: a, b: b, match: make([]int, len(a)), work: 5}
	for i := range d.match {
		d.match[i] = -1
	}
	d.compare(0, len(a), 0, len(b))
	kept, last := 0, -1
	for i, j := range d.match {
		if j < 0 {
			continue
		}
		if j <= last || a[i] != b[j] {
			t.Fatalf("bad match %v", d.match)
		}
		kept, last = kept+1, j
	}
	if kept >= lcsLen(a, b) {
		t.Fatalf("kept %d lines: the budget did not stop the search", kept)
	}
}

func FuzzMerge(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("A\nb\nc\n"), []byte("a\nb\nC\n"))
	f.Add([]byte("a\nb"), []byte("a\nb\n"), []byte("a\r\nb"))
	f.Add([]byte(""), []byte("x\n"), []byte("y"))
	f.Fuzz(func(t *testing.T, base, ours, theirs []byte) {
		if len(base)+len(ours)+len(theirs) > 1<<12 {
			return
		}
		merged, clean := Merge(base, ours, theirs)
		swapped, sclean := Merge(base, theirs, ours)
		if clean != sclean || !bytes.Equal(merged, swapped) {
			t.Fatalf("not symmetric: %v %q, swapped %v %q", clean, merged, sclean, swapped)
		}
		if !clean && merged != nil {
			t.Fatalf("a conflict gave content %q", merged)
		}
		// The chunks alone (without Merge's shortcuts for equal sides)
		// give the side that changed.
		for _, tc := range [][3][]byte{{base, ours, base}, {base, base, ours}, {base, ours, ours}} {
			if m, ok := mergeLines(tc[0], tc[1], tc[2]); !ok || !bytes.Equal(m, ours) {
				t.Fatalf("mergeLines(%q, %q, %q) = %v %q, want %q", tc[0], tc[1], tc[2], ok, m, ours)
			}
		}
		// The line diff is a shortest one.
		in := newInterner(0)
		b, o := in.tokens(splitLines(base)), in.tokens(splitLines(ours))
		if len(b) <= 60 && len(o) <= 60 {
			checkMatch(t, b, o, matchLines(b, o))
		}
	})
}
