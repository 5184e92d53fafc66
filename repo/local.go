package repo

import (
	"context"
	"errors"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
)

// Local is the backend of a store in a directory: the database is the
// truth, so its journal publishes nothing; a sweep deletes packs at once,
// so Reclaim has nothing left to do; a repair salvages the packs (the
// root package's Repair).
type Local struct {
	// Dir is the store's directory.
	Dir string
	// PackStore is its packs directory.
	PackStore cas.PackStore
}

// Features: immediate deletion, observable orphans, no grace, no journal.
func (l *Local) Features() Features {
	return Features{ImmediateDelete: true, OrphansObservable: true}
}

// Location is the store's directory.
func (l *Local) Location() string { return l.Dir }

// Machine is "": no other machine shares the store.
func (l *Local) Machine() string { return "" }

// Packs is the packs directory.
func (l *Local) Packs() cas.PackStore { return l.PackStore }

// Refresh has nothing to bring up to date.
func (l *Local) Refresh(context.Context) (Journal, error) { return noJournal{}, nil }

// Journal publishes nothing.
func (l *Local) Journal() Journal { return noJournal{} }

// Rebuild is not how a store in a directory is rebuilt (its packs are
// salvaged instead): it refuses.
func (l *Local) Rebuild(context.Context, bool) (string, error) { return "", errNoJournal }

// Reclaim has nothing left to do: the sweep deleted what it could.
func (l *Local) Reclaim(context.Context) (Reclaimed, error) { return Reclaimed{}, nil }

// Owns: every project of the store is this machine's.
func (l *Local) Owns(*index.Tx, string) bool { return true }

// Refuse refuses nothing: a store in a directory supports every
// operation.
func (l *Local) Refuse(string) error { return nil }

// errNoJournal is Local.Rebuild's error.
var errNoJournal = errors.New("a store in a directory keeps no journal to rebuild from")

// noJournal publishes nothing: the database is the truth.
type noJournal struct{}

func (noJournal) Commit(context.Context, *index.Tx, Commit) error { return nil }
func (noJournal) Writes(context.Context, *index.Tx, string, []index.Write) error {
	return nil
}
func (noJournal) Dropped(context.Context, *index.Tx, cas.ID) error { return nil }
func (noJournal) Pinned(context.Context, cas.ID, bool) error       { return nil }
