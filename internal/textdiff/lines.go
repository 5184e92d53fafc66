package textdiff

import "bytes"

// maxDiffWork bounds the steps one line diff may take in its search for
// the shortest edit script (a fraction of a second). Past it, the part
// of the texts not yet compared is taken as replaced as a whole: still a
// correct diff, only not the shortest, so a merge may report a conflict
// that a longer search would have avoided, but never merges wrongly.
const maxDiffWork = 1 << 25

// splitLines splits content into lines, each with its '\n' (a last line
// without one is a line too), so joining them gives content back byte
// for byte: "\r\n" endings and a missing last newline are kept.
func splitLines(content []byte) [][]byte {
	var lines [][]byte
	for len(content) > 0 {
		n := bytes.IndexByte(content, '\n') + 1
		if n == 0 {
			n = len(content)
		}
		lines = append(lines, content[:n:n])
		content = content[n:]
	}
	return lines
}

// interner numbers distinct lines, so lines of several contents compare
// as integers.
type interner map[string]int

// tokens returns the numbers of lines, numbering new ones.
func (in interner) tokens(lines [][]byte) []int {
	out := make([]int, len(lines))
	for i, l := range lines {
		n, ok := in[string(l)]
		if !ok {
			n = len(in)
			in[string(l)] = n
		}
		out[i] = n
	}
	return out
}

// matchLines returns, for each line of a, the index of the line of b it
// is kept as in a shortest edit script from a to b, or -1 for a line that
// is deleted (Myers' O(ND) algorithm in linear space, "An O(ND)
// Difference Algorithm and Its Variations", 1986, section 4b). Matched
// indices increase. Past maxDiffWork steps, the rest is left unmatched.
func matchLines(a, b []int) []int {
	d := &lineDiff{a: a, b: b, match: make([]int, len(a)), work: maxDiffWork}
	for i := range d.match {
		d.match[i] = -1
	}
	if shareLine(a, b) {
		d.compare(0, len(a), 0, len(b))
	}
	return d.match
}

// shareLine reports whether a and b have a line in common: texts that
// share none are replaced as a whole, without a search.
func shareLine(a, b []int) bool {
	inB := make(map[int]bool, len(b))
	for _, t := range b {
		inB[t] = true
	}
	for _, t := range a {
		if inB[t] {
			return true
		}
	}
	return false
}

// lineDiff is one matchLines: its sequences, the matches found and the
// work left.
type lineDiff struct {
	a, b   []int
	match  []int
	work   int
	vf, vb []int // furthest reaching x per diagonal, forward and backward
}

// compare matches a[alo:ahi] against b[blo:bhi]: their common ends, then
// each side of the middle of a shortest edit script between the rest.
func (d *lineDiff) compare(alo, ahi, blo, bhi int) {
	for alo < ahi && blo < bhi && d.a[alo] == d.b[blo] {
		d.match[alo] = blo
		alo, blo = alo+1, blo+1
	}
	for alo < ahi && blo < bhi && d.a[ahi-1] == d.b[bhi-1] {
		ahi, bhi = ahi-1, bhi-1
		d.match[ahi] = bhi
	}
	if alo == ahi || blo == bhi {
		return
	}
	x, y, ok := d.split(alo, ahi, blo, bhi)
	if !ok || (x == alo && y == blo) || (x == ahi && y == bhi) {
		return // nothing in common, or out of work: the rest is replaced
	}
	d.compare(alo, x, blo, y)
	d.compare(x, ahi, y, bhi)
}

// split returns a point (x, y) on a shortest edit script from a[alo:ahi]
// to b[blo:bhi], both non-empty with different first and last lines: the
// end of the middle snake, found by searching forward from the start and
// backward from the end until the paths meet (as diff-match-patch's
// bisect does, keeping to the edit graph). It reports false when the
// texts have no line in common or the work budget runs out.
func (d *lineDiff) split(alo, ahi, blo, bhi int) (x, y int, ok bool) {
	n, m := ahi-alo, bhi-blo
	maxD := (n + m + 1) / 2
	off := maxD
	if cap(d.vf) < 2*maxD+2 {
		d.vf, d.vb = make([]int, 2*maxD+2), make([]int, 2*maxD+2)
	}
	vf, vb := d.vf[:2*maxD+2], d.vb[:2*maxD+2]
	for i := range vf {
		vf[i], vb[i] = -1, -1
	}
	vf[off+1], vb[off+1] = 0, 0
	delta := n - m
	front := delta&1 != 0 // the forward search meets the backward one
	var f, b bounds
	for D := 0; D < maxD; D++ {
		if d.work -= 2*D + 1; d.work < 0 {
			return 0, 0, false
		}
		for k := -D + f.start; k <= D-f.end; k += 2 {
			x := nextX(vf, off, k, D)
			for x < n && x-k < m && d.a[alo+x] == d.b[blo+x-k] {
				x++
			}
			vf[off+k] = x
			if f.off(x, x-k, n, m) {
				continue
			}
			if kb := off + delta - k; front && kb >= 0 && kb < len(vb) && vb[kb] != -1 && x >= n-vb[kb] {
				return alo + x, blo + x - k, true
			}
		}
		for k := -D + b.start; k <= D-b.end; k += 2 {
			x := nextX(vb, off, k, D)
			for x < n && x-k < m && d.a[ahi-1-x] == d.b[bhi-1-(x-k)] {
				x++
			}
			vb[off+k] = x
			if b.off(x, x-k, n, m) {
				continue
			}
			if kf := off + delta - k; !front && kf >= 0 && kf < len(vf) && vf[kf] != -1 && vf[kf] >= n-x {
				return alo + vf[kf], blo + vf[kf] - (kf - off), true
			}
		}
	}
	return 0, 0, false
}

// bounds narrows the diagonals one search still follows: those whose
// paths ran off the edit graph's bottom (start) or right (end) side.
type bounds struct{ start, end int }

// off reports whether a path reached (x, y) outside the n by m edit
// graph, and stops following its side.
func (b *bounds) off(x, y, n, m int) bool {
	switch {
	case x > n:
		b.end += 2
	case y > m:
		b.start += 2
	default:
		return false
	}
	return true
}

// nextX is where a path of D edits on diagonal k starts its run: one step
// down from diagonal k+1 or right from k-1, whichever reaches further.
func nextX(v []int, off, k, D int) int {
	if k == -D || (k != D && v[off+k-1] < v[off+k+1]) {
		return v[off+k+1]
	}
	return v[off+k-1] + 1
}
