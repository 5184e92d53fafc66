package textdiff

import (
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
	u, r, err := diff(oldLabel, newLabel, old, new)
	if err != nil {
		return Result{}, err
	}
	r.Patch = u.String()
	return r, nil
}

// Count returns the lines inserted and deleted from old to new, as
// Unified counts them, without the patch.
func Count(old, new []byte) (Result, error) {
	_, r, err := diff("", "", old, new)
	return r, err
}

// diff computes the unified diff from old to new and counts its lines.
func diff(oldLabel, newLabel string, old, new []byte) (udiff.UnifiedDiff, Result, error) {
	u, err := udiff.ToUnifiedDiff(oldLabel, newLabel, string(old), udiff.Bytes(old, new), udiff.DefaultContextLines)
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
