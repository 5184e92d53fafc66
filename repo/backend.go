package repo

import (
	"context"
	"errors"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
)

// ErrRefused: the operation is not allowed on this input or this backend.
// The root package names it casckpt.ErrRefused.
var ErrRefused = errors.New("refused")

// ErrStale marks the error of Backend.Refresh when the records cannot be
// brought up to date and must be rebuilt from the backend first
// (Backend.Rebuild): a damaged cache, one behind the bucket's gc horizon,
// or one built for another machine or fleet key.
var ErrStale = errors.New("the records must be rebuilt from the backend")

// Features say what a backend can do, for the use cases that differ.
type Features struct {
	// ImmediateDelete: packs may be deleted as soon as no snapshot needs
	// them (a sweep, a repack, clear). Without it only Backend.Reclaim
	// deletes packs, a grace period after it found them unneeded: other
	// writers may be reusing them meanwhile.
	ImmediateDelete bool
	// OrphansObservable: a project's directory is on this machine, so a
	// project whose directory is observably gone is an orphan that prune
	// may drop.
	OrphansObservable bool
	// Grace is how long a pack found unneeded waits before
	// Backend.Reclaim deletes it (0: no wait).
	Grace time.Duration
	// Journaled: the records are a cache of a journal that the backend
	// keeps elsewhere. The store always exists; Refresh brings the records
	// up to date before a shared operation; Rebuild makes them anew from
	// the journal at any time, losing nothing.
	Journaled bool
	// InlinePacks: a turn's small packs may be kept in the records'
	// database, committed with the records (see package cas), instead of
	// written to Packs. A backend whose packs other machines read (a
	// bucket) never has it.
	InlinePacks bool
	// Deltas: a sweep may store an object as a delta of an earlier
	// version (cas.SweepOptions.Bases), in packs of a version that
	// casckpt before it cannot read. A backend whose packs other
	// machines read (a bucket), where such a casckpt may run, never has
	// it.
	Deltas bool
}

// Backend is where one store keeps its data beyond the records' database:
// Local (a directory) or repo/bucket (a bucket of an S3 server).
type Backend interface {
	// Features says what the backend can do.
	Features() Features
	// Location is the store's directory or URL, as hosts name it.
	Location() string
	// Machine is this machine's ID in a store that several machines share
	// ("" when none do).
	Machine() string
	// Packs is where the pack bytes live. A backend without
	// ImmediateDelete refuses their deletion there.
	Packs() cas.PackStore
	// Refresh brings the records up to date with the journal, under the
	// store's shared lock, and returns the journal that the operation
	// publishes its changes to. Its error wraps ErrStale when the records
	// must be rebuilt first. A backend may skip a refresh soon after the
	// last one (a bucket's, within a second); with force it does not, so
	// the records then hold every change the journal held when it was
	// called: verify forces it, as does a read that met a missing pack.
	Refresh(ctx context.Context, force bool) (Journal, error)
	// Journal returns the journal of an operation that did not refresh
	// (it holds the store's exclusive lock).
	Journal() Journal
	// Rebuild makes the records anew, for when they are damaged or lost:
	// from the packs (Local: Salvage), or from the journal, as deleted
	// records are. The old database is kept (Rebuilt.OldDatabase) unless
	// keep is false and the backend is Journaled (it holds nothing the
	// journal lacks). The caller holds the exclusive lock.
	Rebuild(ctx context.Context, keep bool) (Rebuilt, error)
	// Reclaim returns the space of the objects no snapshot reaches, as
	// far as the backend can now (the caller holds the exclusive lock,
	// and has swept already when ImmediateDelete).
	Reclaim(ctx context.Context) (Reclaimed, error)
	// Owns reports whether project workdir of the records in tx is this
	// machine's own, which a command may act on without being told its
	// directory.
	Owns(tx *index.Tx, workdir string) bool
	// Refuse returns the error of operation op when the backend does not
	// support it yet, else nil.
	Refuse(op string) error
}

// Reclaimed says what Backend.Reclaim deleted.
type Reclaimed struct {
	Objects int
	Bytes   int64
}

// Journal is where an operation publishes what it commits to the records,
// last in each write transaction, so that the backend keeps it: a no-op
// where the database is the truth.
type Journal interface {
	// Commit publishes a snapshot's or a turn's commit in tx.
	Commit(ctx context.Context, tx *index.Tx, c Commit) error
	// Writes publishes the writes tx records in project workdir's ledger.
	Writes(ctx context.Context, tx *index.Tx, workdir string, writes []index.Write) error
	// Dropped publishes the drop of snapshot id, which tx deletes.
	Dropped(ctx context.Context, tx *index.Tx, id cas.ID) error
	// Pinned publishes the pin (or unpin) of snapshot id.
	Pinned(ctx context.Context, id cas.ID, pinned bool) error
	// Policy publishes project p.Workdir's policy, which tx records.
	Policy(ctx context.Context, tx *index.Tx, p index.Policy) error
}

// Commit is what the commit of a snapshot or a turn adds to the records:
// the snapshot (nil when it made none), the turn record it changed (nil
// when none), and, in tx, the packs it added.
type Commit struct {
	Workdir  string
	Snapshot *index.Snapshot
	Turn     *index.Turn
}
