package casckpt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// TriedSnapshot is a snapshot that a fallback passed over, and why.
type TriedSnapshot struct {
	ID ID
	// Reason is why: its data is damaged ("damaged: ..."), the file is
	// not in it, or the check refused the file.
	Reason string
}

// NoIntactError is the error of a fallback that found no snapshot left
// to use: it tried Tried snapshots, SNAP and every older one, and none
// holds an intact copy of Path (that passes the check). It matches
// ErrDamaged.
type NoIntactError struct {
	Path  string
	Tried int
}

func (e *NoIntactError) Error() string {
	return fmt.Sprintf("no intact copy of %s (tried %d snapshots)", e.Path, e.Tried)
}

func (e *NoIntactError) Unwrap() error { return ErrDamaged }

// CheckJSON is a CatOptions.Check that accepts bytes that parse as one
// JSON document.
func CheckJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("does not parse as JSON: %w", err)
	}
	return nil
}

// fallback returns the first of candidates (SNAP, then the older
// snapshots, newest first) that try accepts, and those passed over
// before it. try returns the reason to pass a snapshot over ("" to take
// it) or an error that ends the search. When every candidate is passed
// over, the error is a *NoIntactError naming what.
func fallback(ctx context.Context, candidates []record, what string, try func(sn record) (string, error)) (record, []TriedSnapshot, error) {
	tried := []TriedSnapshot{}
	for _, sn := range candidates {
		if err := ctx.Err(); err != nil {
			return record{}, tried, err
		}
		reason, err := try(sn)
		if err != nil {
			return record{}, tried, err
		}
		if reason == "" {
			return sn, tried, nil
		}
		tried = append(tried, TriedSnapshot{ID: sn.ID, Reason: reason})
	}
	return record{}, tried, &NoIntactError{Path: what, Tried: len(tried)}
}

// damageReason is the reason to pass over snapshot sn whose read failed
// with err, "" when err is nil, or err itself when it is no damage.
func damageReason(sn record, err error) (string, error) {
	var d *damagedError
	if err == nil {
		return "", nil
	}
	if !errors.As(damaged(sn, err), &d) {
		return "", err
	}
	return "damaged: " + d.err.Error(), nil
}
