package textdiff

import "math"

// The bounds of git's Myers search (xdiff/xdiffi.c).
const (
	minMaxCost  = 256 // the least edit cost past which a search takes the furthest path it has
	heurMinCost = 256 // the edit cost past which a search looks for a long run of equal lines
	snakeLen    = 20  // how long such a run must be
	heurFactor  = 4   // how far (per unit of cost) a path must have come to be taken
)

// gitSearch is one line diff searched as git diff searches it (xdiff's
// xdl_recs_cmp and xdl_split): Myers' linear-space search from both ends
// for the middle of an edit script, and the halves split again, but
// with git's bounds: past heurMinCost, a path that has come far along a
// run of snakeLen equal lines is taken as the middle, and past maxCost
// the furthest path either way is. So its script is the shortest one
// for small differences, and git's own, tie for tie, always.
type gitSearch struct {
	a, b               []int  // the lines' numbers
	changedA, changedB []bool // the result
	fwd, bwd           []int  // furthest x per diagonal k, at k+diag
	diag               int
	maxCost            int
}

// searchLikeGit returns which lines of a and of b (line numbers) the
// diff from a to b changes, as git's search finds them.
func searchLikeGit(a, b []int) (changedA, changedB []bool) {
	n := len(a) + len(b) + 3
	s := &gitSearch{a: a, b: b, changedA: make([]bool, len(a)), changedB: make([]bool, len(b)),
		fwd: make([]int, n), bwd: make([]int, n), diag: len(b) + 1, maxCost: max(bogoSqrt(n), minMaxCost)}
	s.compare(0, len(a), 0, len(b), false)
	return s.changedA, s.changedB
}

// compare marks the changes between a[lo1:hi1] and b[lo2:hi2]: past
// their common ends, all of one side when the other is empty, else those
// of each side of a middle point that split finds. exact asks split for
// a shortest script there.
func (s *gitSearch) compare(lo1, hi1, lo2, hi2 int, exact bool) {
	for lo1 < hi1 && lo2 < hi2 && s.a[lo1] == s.b[lo2] {
		lo1, lo2 = lo1+1, lo2+1
	}
	for lo1 < hi1 && lo2 < hi2 && s.a[hi1-1] == s.b[hi2-1] {
		hi1, hi2 = hi1-1, hi2-1
	}
	switch {
	case lo1 == hi1:
		for ; lo2 < hi2; lo2++ {
			s.changedB[lo2] = true
		}
	case lo2 == hi2:
		for ; lo1 < hi1; lo1++ {
			s.changedA[lo1] = true
		}
	default:
		m := s.split(lo1, hi1, lo2, hi2, exact)
		s.compare(lo1, m.x, lo2, m.y, m.exactLow)
		s.compare(m.x, hi1, m.y, hi2, m.exactHigh)
	}
}

// middle is where split divides a comparison, and whether each half
// must then be searched for a shortest script.
type middle struct {
	x, y                int
	exactLow, exactHigh bool
}

// split finds the middle of an edit script from a[lo1:hi1] to b[lo2:hi2],
// searching forward from the start and backward from the end one edit
// at a time until the paths meet. Unless exact, it stops early as git
// does (see gitSearch).
func (s *gitSearch) split(lo1, hi1, lo2, hi2 int, exact bool) middle {
	f := func(k int) *int { return &s.fwd[k+s.diag] }
	b := func(k int) *int { return &s.bwd[k+s.diag] }
	dmin, dmax := lo1-hi2, hi1-lo2
	fmid, bmid := lo1-lo2, hi1-hi2
	odd := (fmid-bmid)&1 != 0
	fmin, fmax, bmin, bmax := fmid, fmid, bmid, bmid
	*f(fmid), *b(bmid) = lo1, hi1
	for cost := 1; ; cost++ {
		gotSnake := false
		// Widen the diagonals searched by one each way, inside the box.
		if fmin > dmin {
			fmin--
			*f(fmin - 1) = -1
		} else {
			fmin++
		}
		if fmax < dmax {
			fmax++
			*f(fmax + 1) = -1
		} else {
			fmax--
		}
		for k := fmax; k >= fmin; k -= 2 {
			x := *f(k + 1)
			if *f(k - 1) >= *f(k + 1) {
				x = *f(k - 1) + 1
			}
			start := x
			y := x - k
			for x < hi1 && y < hi2 && s.a[x] == s.b[y] {
				x, y = x+1, y+1
			}
			gotSnake = gotSnake || x-start > snakeLen
			*f(k) = x
			if odd && bmin <= k && k <= bmax && *b(k) <= x {
				return middle{x, y, true, true}
			}
		}
		if bmin > dmin {
			bmin--
			*b(bmin - 1) = math.MaxInt
		} else {
			bmin++
		}
		if bmax < dmax {
			bmax++
			*b(bmax + 1) = math.MaxInt
		} else {
			bmax--
		}
		for k := bmax; k >= bmin; k -= 2 {
			x := *b(k + 1) - 1
			if *b(k - 1) < *b(k + 1) {
				x = *b(k - 1)
			}
			start := x
			y := x - k
			for x > lo1 && y > lo2 && s.a[x-1] == s.b[y-1] {
				x, y = x-1, y-1
			}
			gotSnake = gotSnake || start-x > snakeLen
			*b(k) = x
			if !odd && fmin <= k && k <= fmax && x <= *f(k) {
				return middle{x, y, true, true}
			}
		}
		if exact {
			continue
		}
		if gotSnake && cost > heurMinCost {
			if m, ok := s.farSnake(lo1, hi1, lo2, hi2, fmin, fmax, bmin, bmax, cost); ok {
				return m
			}
		}
		if cost >= s.maxCost {
			return s.furthest(lo1, hi1, lo2, hi2, fmin, fmax, bmin, bmax)
		}
	}
}

// farSnake looks among the paths so far for one that has come far (by
// its distance from the start, less its distance from the middle
// diagonal, over heurFactor times the cost) and ends a run of snakeLen
// equal lines: the forward paths first, then the backward ones. Such a
// point is taken as the middle, searched exactly on the side it came
// from.
func (s *gitSearch) farSnake(lo1, hi1, lo2, hi2, fmin, fmax, bmin, bmax, cost int) (middle, bool) {
	fmid, bmid := lo1-lo2, hi1-hi2
	best, m := 0, middle{}
	for k := fmax; k >= fmin; k -= 2 {
		x := s.fwd[k+s.diag]
		y := x - k
		v := (x - lo1) + (y - lo2) - abs(k-fmid)
		if v > heurFactor*cost && v > best && lo1+snakeLen <= x && x < hi1 && lo2+snakeLen <= y && y < hi2 &&
			s.equalRun(x-snakeLen, y-snakeLen) {
			best, m = v, middle{x, y, true, false}
		}
	}
	if best > 0 {
		return m, true
	}
	for k := bmax; k >= bmin; k -= 2 {
		x := s.bwd[k+s.diag]
		y := x - k
		v := (hi1 - x) + (hi2 - y) - abs(k-bmid)
		if v > heurFactor*cost && v > best && lo1 < x && x <= hi1-snakeLen && lo2 < y && y <= hi2-snakeLen &&
			s.equalRun(x, y) {
			best, m = v, middle{x, y, false, true}
		}
	}
	return m, best > 0
}

// equalRun reports whether the snakeLen lines of a from x equal those of
// b from y.
func (s *gitSearch) equalRun(x, y int) bool {
	for k := range snakeLen {
		if s.a[x+k] != s.b[y+k] {
			return false
		}
	}
	return true
}

// furthest is the middle when the search has cost too much: the end of
// the forward or backward path that has come furthest (x + y), searched
// exactly on the side it came from.
func (s *gitSearch) furthest(lo1, hi1, lo2, hi2, fmin, fmax, bmin, bmax int) middle {
	fbest, fx := -1, -1
	for k := fmax; k >= fmin; k -= 2 {
		x := min(s.fwd[k+s.diag], hi1)
		y := x - k
		if hi2 < y {
			x, y = hi2+k, hi2
		}
		if fbest < x+y {
			fbest, fx = x+y, x
		}
	}
	bbest, bx := math.MaxInt, math.MaxInt
	for k := bmax; k >= bmin; k -= 2 {
		x := max(lo1, s.bwd[k+s.diag])
		y := x - k
		if y < lo2 {
			x, y = lo2+k, lo2
		}
		if x+y < bbest {
			bbest, bx = x+y, x
		}
	}
	if (hi1+hi2)-bbest < fbest-(lo1+lo2) {
		return middle{fx, fbest - fx, true, false}
	}
	return middle{bx, bbest - bx, false, true}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
