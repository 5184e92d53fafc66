package repo

import (
	"context"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
)

// Local is the backend of a store in a directory: the database is the
// truth, so its journal publishes nothing; a sweep deletes packs at once,
// so Reclaim has nothing left to do; Rebuild salvages the packs.
type Local struct {
	dir   string
	db    *index.DB
	packs func() cas.PackStore
	now   func() time.Time
}

// NewLocal returns the backend of the store in directory dir, whose
// records are db and whose packs are what packs returns (the store's
// pack store as it is when asked), on the clock now.
func NewLocal(dir string, db *index.DB, packs func() cas.PackStore, now func() time.Time) *Local {
	return &Local{dir: dir, db: db, packs: packs, now: now}
}

// Features: immediate deletion, observable orphans, no grace, no journal,
// inline packs.
func (l *Local) Features() Features {
	return Features{ImmediateDelete: true, OrphansObservable: true, InlinePacks: true, Deltas: true}
}

// Location is the store's directory.
func (l *Local) Location() string { return l.dir }

// Machine is "": no other machine shares the store.
func (l *Local) Machine() string { return "" }

// Packs is the packs directory.
func (l *Local) Packs() cas.PackStore { return l.packs() }

// Refresh has nothing to bring up to date.
func (l *Local) Refresh(context.Context, bool) (Journal, error) { return noJournal{}, nil }

// Journal publishes nothing.
func (l *Local) Journal() Journal { return noJournal{} }

// Rebuild salvages the packs (Salvage); the old database is always kept.
func (l *Local) Rebuild(ctx context.Context, _ bool) (Rebuilt, error) {
	return Salvage(ctx, l.db, l.packs(), l.now())
}

// Reclaim has nothing left to do: the sweep deleted what it could.
func (l *Local) Reclaim(context.Context) (Reclaimed, error) { return Reclaimed{}, nil }

// Owns: every project of the store is this machine's.
func (l *Local) Owns(*index.Tx, string) bool { return true }

// Refuse refuses nothing: a store in a directory supports every
// operation.
func (l *Local) Refuse(string) error { return nil }

// noJournal publishes nothing: the database is the truth.
type noJournal struct{}

func (noJournal) Commit(context.Context, *index.Tx, Commit) error { return nil }
func (noJournal) Writes(context.Context, *index.Tx, string, []index.Write) error {
	return nil
}
func (noJournal) Dropped(context.Context, *index.Tx, cas.ID) error      { return nil }
func (noJournal) Pinned(context.Context, cas.ID, bool) error            { return nil }
func (noJournal) Policy(context.Context, *index.Tx, index.Policy) error { return nil }
