package casckpt

import "errors"

// Errors of the store's operations. Each is wrapped with what was asked.
var (
	// ErrNotFound: no snapshot matches a reference, or a path is not in it.
	ErrNotFound = errors.New("not found")
	// ErrAmbiguousRef: a hex prefix matches several snapshots.
	ErrAmbiguousRef = errors.New("ambiguous snapshot reference")
	// ErrBadRef: a reference is neither hex digits nor @N.
	ErrBadRef = errors.New("malformed snapshot reference")
	// ErrRefused: the operation is not allowed on this input (the root or
	// home directory, too many files, a path outside the project).
	ErrRefused = errors.New("refused")
	// ErrDamaged: a snapshot's data is missing or corrupt.
	ErrDamaged = errors.New("snapshot damaged")
)
