package textdiff

import (
	"bytes"
	"hash/maphash"
)

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
	lines := make([][]byte, 0, bytes.Count(content, []byte{'\n'})+1)
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

// interner numbers distinct lines 0, 1, 2..., so lines of several
// contents compare as integers. It is a table of the lines' hashes (as
// git's xdl_classify_record keeps one), each line compared with the
// first of its number when their hashes match: a plain map of strings
// costs several times as much on a content of many lines.
type interner struct {
	seed  maphash.Seed
	slots []int32  // a number + 1, 0 for a free slot; a power of two long
	hash  []uint64 // of each number's line
	first [][]byte // each number's line
}

// newInterner returns an interner with room for about n distinct lines
// (it grows past them).
func newInterner(n int) *interner {
	size := 16
	for size < 2*n {
		size *= 2
	}
	return &interner{seed: maphash.MakeSeed(), slots: make([]int32, size),
		hash: make([]uint64, 0, n), first: make([][]byte, 0, n)}
}

// find returns the slot of line, whose hash is h: the one that holds its
// number, or the free one where it would go.
func (in *interner) find(line []byte, h uint64) int {
	mask := len(in.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		n := in.slots[i] - 1
		if n < 0 || in.hash[n] == h && bytes.Equal(in.first[n], line) {
			return i
		}
	}
}

// number returns line's number, and false when it has none.
func (in *interner) number(line []byte) (int, bool) {
	n := in.slots[in.find(line, maphash.Bytes(in.seed, line))] - 1
	return int(n), n >= 0
}

// tokens returns the numbers of lines, numbering new ones.
func (in *interner) tokens(lines [][]byte) []int {
	out := make([]int, len(lines))
	for i, l := range lines {
		h := maphash.Bytes(in.seed, l)
		slot := in.find(l, h)
		if in.slots[slot] == 0 {
			if 2*(len(in.first)+1) > len(in.slots) {
				in.grow()
				slot = in.find(l, h)
			}
			in.hash, in.first = append(in.hash, h), append(in.first, l)
			in.slots[slot] = int32(len(in.first))
		}
		out[i] = int(in.slots[slot] - 1)
	}
	return out
}

// grow doubles the table.
func (in *interner) grow() {
	in.slots = make([]int32, 2*len(in.slots))
	mask := len(in.slots) - 1
	for n, h := range in.hash {
		i := int(h) & mask
		for in.slots[i] != 0 {
			i = (i + 1) & mask
		}
		in.slots[i] = int32(n + 1)
	}
}

// matchLines returns, for each line of a, the index of the line of b it
// is kept as in a shortest edit script from a to b, or -1 for a line that
// is deleted (Myers' O(ND) algorithm in linear space, "An O(ND)
// Difference Algorithm and Its Variations", 1986, section 4b). Matched
// indices increase. Past maxDiffWork steps, the rest is left unmatched.
func matchLines(a, b []int) []int {
	d := &lineSearch{a: a, b: b, match: make([]int, len(a)), work: maxDiffWork}
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
	most := -1
	for _, t := range b {
		most = max(most, t)
	}
	inB := make([]bool, most+1)
	for _, t := range b {
		inB[t] = true
	}
	for _, t := range a {
		if t <= most && inB[t] {
			return true
		}
	}
	return false
}

// lineSearch is one matchLines: its sequences, the matches found and the
// work left.
type lineSearch struct {
	a, b   []int
	match  []int
	work   int
	vf, vb []int // furthest reaching x per diagonal, forward and backward
}

// compare matches a[alo:ahi] against b[blo:bhi]: their common ends, then
// each side of the middle of a shortest edit script between the rest.
func (d *lineSearch) compare(alo, ahi, blo, bhi int) {
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
func (d *lineSearch) split(alo, ahi, blo, bhi int) (x, y int, ok bool) {
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
