package casckpt

import (
	"errors"

	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/repo"
)

// Errors of the store's operations. Each is wrapped with what was asked.
var (
	// ErrNotFound: no snapshot matches a reference, or a path is not in it.
	ErrNotFound = errors.New("not found")
	// ErrAmbiguousRef: a hex prefix matches several snapshots.
	ErrAmbiguousRef = errors.New("ambiguous snapshot reference")
	// ErrBadRef: a reference is neither hex digits, @N nor #N.
	ErrBadRef = errors.New("malformed snapshot reference")
	// ErrRefused: the operation is not allowed on this input (the root or
	// home directory, too many files, a path outside the project).
	ErrRefused = repo.ErrRefused
	// ErrDamaged: a snapshot's data is missing or corrupt.
	ErrDamaged = errors.New("snapshot damaged")
)

// ErrBusy is returned when another process held the store, its lock or its
// database, past the lock timeout.
var ErrBusy = index.ErrBusy

// errSameAsNewest rolls back a snapshot's commit when the project's newest
// snapshot, committed by another process since this one looked, holds the
// same tree: processes snapshotting one tree at once record it once.
var errSameAsNewest = errors.New("the newest snapshot holds the same tree")

// ErrDatabase: the store's database is damaged.
var ErrDatabase = index.ErrDamaged
