package textdiff

import "bytes"

// The weights of git's indent heuristic (xdiff/xdiffi.c, from Michael
// Haggerty's diff-slider-tools): a split between two lines scores worse
// the higher these add up.
const (
	maxIndent                   = 200
	maxBlanks                   = 20
	startOfFilePenalty          = 1
	endOfFilePenalty            = 21
	totalBlankWeight            = -30
	postBlankWeight             = 6
	relativeIndentPenalty       = -4
	relativeIndentBlankPenalty  = 10
	relativeOutdentPenalty      = 24
	relativeOutdentBlankPenalty = 17
	relativeDedentPenalty       = 23
	relativeDedentBlankPenalty  = 17
	indentWeight                = 60
	maxSliding                  = 100
)

// compact moves each run of changed lines that could as well sit higher
// or lower (its first line equals the line after it, or its last the line
// before it) to where git diff puts it, in both contents: next to a
// change of the other content when it can be, else where git's indent
// heuristic likes it best. It changes which lines are marked, never how
// many.
func (d *lineDiff) compact() {
	d.a.compact(&d.b)
	d.b.compact(&d.a)
}

// group is a run of changed lines of one side, [start, end): there is one
// (maybe empty) before the first unchanged line, between each two, and
// after the last, so the groups of both sides pair up.
type group struct{ start, end int }

// firstGroup is the group before the first unchanged line.
func (s *side) firstGroup() group {
	g := group{}
	for s.isChanged(g.end) {
		g.end++
	}
	return g
}

// next moves g to the next group; false after the last.
func (s *side) next(g *group) bool {
	if g.end == len(s.lines) {
		return false
	}
	g.start = g.end + 1
	g.end = g.start
	for s.isChanged(g.end) {
		g.end++
	}
	return true
}

// previous moves g to the group before; false at the first.
func (s *side) previous(g *group) bool {
	if g.start == 0 {
		return false
	}
	g.end = g.start - 1
	for g.start = g.end; s.isChanged(g.start - 1); g.start-- {
	}
	return true
}

// slideDown moves g one line down when its first line equals the line
// after it, joining the group below when they meet.
func (s *side) slideDown(g *group) bool {
	if g.end >= len(s.lines) || !bytes.Equal(s.lines[g.start], s.lines[g.end]) {
		return false
	}
	s.setChanged(g.start, false)
	s.setChanged(g.end, true)
	g.start++
	for g.end++; s.isChanged(g.end); g.end++ {
	}
	return true
}

// slideUp moves g one line up when its last line equals the line before
// it, joining the group above when they meet.
func (s *side) slideUp(g *group) bool {
	if g.start == 0 || !bytes.Equal(s.lines[g.start-1], s.lines[g.end-1]) {
		return false
	}
	s.setChanged(g.start-1, true)
	s.setChanged(g.end-1, false)
	g.end--
	for g.start--; s.isChanged(g.start - 1); g.start-- {
	}
	return true
}

// compact slides the groups of s, keeping o (the other side) in step, as
// git's xdl_change_compact does.
func (s *side) compact(o *side) {
	g, og := s.firstGroup(), o.firstGroup()
	for {
		if g.end != g.start {
			s.place(o, &g, &og)
		}
		if !s.next(&g) {
			return
		}
		o.next(&og)
	}
}

// place slides one non-empty group g (og its pair in o): up and down as
// far as it goes, merging with the groups it meets, then back up to line
// up with the last non-empty group of o it met, or to the place the
// indent heuristic scores best.
func (s *side) place(o *side, g, og *group) {
	var size, earliestEnd, endMatchingOther int
	for {
		size = g.end - g.start
		endMatchingOther = -1
		for s.slideUp(g) {
			o.previous(og)
		}
		earliestEnd = g.end
		if og.end > og.start {
			endMatchingOther = g.end
		}
		for s.slideDown(g) {
			o.next(og)
			if og.end > og.start {
				endMatchingOther = g.end
			}
		}
		if size == g.end-g.start {
			break
		}
	}
	switch {
	case g.end == earliestEnd:
	case endMatchingOther != -1:
		for og.end == og.start {
			s.slideUp(g)
			o.previous(og)
		}
	default:
		shift := max(earliestEnd, g.end-size-1, g.end-maxSliding)
		best, bestScore := -1, splitScore{}
		for ; shift <= g.end; shift++ {
			var sc splitScore
			sc.add(s.measure(shift))
			sc.add(s.measure(shift - size))
			if best == -1 || sc.cmp(bestScore) <= 0 {
				best, bestScore = shift, sc
			}
		}
		for g.end > best {
			s.slideUp(g)
			o.previous(og)
		}
	}
}

// indent is the width of line's leading white space (a tab to the next
// multiple of 8, at most maxIndent), or -1 for a line of white space only.
func indent(line []byte) int {
	n := 0
	for _, c := range line {
		switch c {
		case ' ':
			n++
		case '\t':
			n += 8 - n%8
		case '\n', '\v', '\f', '\r':
		default:
			return n
		}
		if n >= maxIndent {
			return maxIndent
		}
	}
	return -1
}

// splitMeasure describes the place above line split: that line's indent,
// the blank lines before and after it and the indents beyond them.
type splitMeasure struct {
	endOfFile             bool
	indent                int
	preBlank, preIndent   int
	postBlank, postIndent int
}

func (s *side) measure(split int) splitMeasure {
	m := splitMeasure{indent: -1, preIndent: -1, postIndent: -1}
	if split >= len(s.lines) {
		m.endOfFile = true
	} else {
		m.indent = indent(s.lines[split])
	}
	for i := split - 1; i >= 0; i-- {
		if m.preIndent = indent(s.lines[i]); m.preIndent != -1 {
			break
		}
		if m.preBlank++; m.preBlank == maxBlanks {
			m.preIndent = 0
			break
		}
	}
	for i := split + 1; i < len(s.lines); i++ {
		if m.postIndent = indent(s.lines[i]); m.postIndent != -1 {
			break
		}
		if m.postBlank++; m.postBlank == maxBlanks {
			m.postIndent = 0
			break
		}
	}
	return m
}

// splitScore is the badness of a group's place: the sum of the indents
// at its two ends and the penalties of git's weights.
type splitScore struct{ effectiveIndent, penalty int }

func (sc *splitScore) add(m splitMeasure) {
	if m.preIndent == -1 && m.preBlank == 0 {
		sc.penalty += startOfFilePenalty
	}
	if m.endOfFile {
		sc.penalty += endOfFilePenalty
	}
	postBlank := 0
	if m.indent == -1 {
		postBlank = 1 + m.postBlank
	}
	totalBlank := m.preBlank + postBlank
	sc.penalty += totalBlankWeight*totalBlank + postBlankWeight*postBlank
	ind := m.indent
	if ind == -1 {
		ind = m.postIndent
	}
	blanks := totalBlank != 0
	sc.effectiveIndent += ind
	switch {
	case ind == -1, m.preIndent == -1, ind == m.preIndent:
	case ind > m.preIndent:
		sc.penalty += choose(blanks, relativeIndentBlankPenalty, relativeIndentPenalty)
	case m.postIndent != -1 && m.postIndent > ind:
		sc.penalty += choose(blanks, relativeOutdentBlankPenalty, relativeOutdentPenalty)
	default:
		sc.penalty += choose(blanks, relativeDedentBlankPenalty, relativeDedentPenalty)
	}
}

// cmp is below zero when sc is better than o.
func (sc splitScore) cmp(o splitScore) int {
	c := 0
	switch {
	case sc.effectiveIndent > o.effectiveIndent:
		c = 1
	case sc.effectiveIndent < o.effectiveIndent:
		c = -1
	}
	return indentWeight*c + sc.penalty - o.penalty
}

func choose(cond bool, yes, no int) int {
	if cond {
		return yes
	}
	return no
}
