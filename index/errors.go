package index

import "errors"

// Errors of the database layer.
var (
	// ErrCorrupt: a record does not decode.
	ErrCorrupt = errors.New("index record corrupt")
	// ErrSchema: the database was written by an incompatible version.
	ErrSchema = errors.New("incompatible store format")
	// ErrBusy: another process held the store past the timeout. It is the
	// one "store is busy" error; the root package re-exports it.
	ErrBusy = errors.New("store is busy")
	// ErrDamaged: the database file cannot be read as one.
	ErrDamaged = errors.New("the store's database is damaged")
	// ErrNewer: the database was written by a newer casckpt (its schema
	// version is higher than SchemaVersion). It also matches ErrSchema.
	ErrNewer = errors.New("written by a newer casckpt")
)
