package textdiff

import (
	"bytes"
	"fmt"

	udiff "github.com/aymanbagabas/go-udiff"
)

// Result is the difference between two contents.
type Result struct {
	// Patch is the unified diff from the old content to the new one; empty
	// when they are equal, and always empty from Count.
	Patch string
	// Insertions and Deletions count the lines the patch adds and removes.
	Insertions, Deletions int64
}

// Unified returns the patch from old to new, its "---" and "+++" lines
// naming them oldLabel and newLabel (git uses "a/path", "b/path" and
// "/dev/null" for a missing side), with its line counts.
func Unified(oldLabel, newLabel string, old, new []byte) (Result, error) {
	u, r, err := diff(oldLabel, newLabel, old, new, true)
	if err != nil {
		return Result{}, err
	}
	r.Patch = u.String()
	return r, nil
}

// Count returns the lines inserted and deleted from old to new, as
// Unified counts them, without the patch.
func Count(old, new []byte) (Result, error) {
	_, r, err := diff("", "", old, new, false)
	return r, err
}

// commonLines returns the length of the whole lines that old and new
// share at their start (head), and then of those they share at their end
// (tail).
func commonLines(old, new []byte) (head, tail int) {
	for head < len(old) && head < len(new) && old[head] == new[head] {
		head++
	}
	head = bytes.LastIndexByte(old[:head], '\n') + 1
	old, new = old[head:], new[head:]
	for tail < len(old) && tail < len(new) && old[len(old)-1-tail] == new[len(new)-1-tail] {
		tail++
	}
	// The shared end must begin a line in both.
	for tail > 0 && !(lineStart(old, len(old)-tail) && lineStart(new, len(new)-tail)) {
		tail--
	}
	return head, tail
}

// lineStart reports whether a line of b begins at offset i.
func lineStart(b []byte, i int) bool { return i == 0 || b[i-1] == '\n' }

// diff computes the unified diff from old to new and counts its lines.
// The whole lines both share at their start and at their end are left out
// of the comparison (as git's xdiff does), so a small edit of a large file
// costs little more than comparing its bytes; without whole, they are
// left out of the patch too (its context is then cut short, its counts
// are the same).
func diff(oldLabel, newLabel string, old, new []byte, whole bool) (udiff.UnifiedDiff, Result, error) {
	head, tail := commonLines(old, new)
	content := old[head : len(old)-tail]
	edits := udiff.Bytes(content, new[head:len(new)-tail])
	if whole {
		for i := range edits {
			edits[i].Start += head
			edits[i].End += head
		}
		content = old
	}
	u, err := udiff.ToUnifiedDiff(oldLabel, newLabel, string(content), edits, udiff.DefaultContextLines)
	if err != nil {
		return u, Result{}, fmt.Errorf("unified diff: %w", err)
	}
	var r Result
	for _, h := range u.Hunks {
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Insert:
				r.Insertions++
			case udiff.Delete:
				r.Deletions++
			}
		}
	}
	return u, r, nil
}
