package casckpt

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/casckpt/casckpt/cas"
)

// damaged turns a missing or corrupt object met while reading snapshot sn
// into ErrDamaged (a *damagedError); other errors pass through.
func damaged(sn record, err error) error {
	if errors.Is(err, cas.ErrCorrupt) || errors.Is(err, cas.ErrNotFound) {
		return &damagedError{sn: sn, err: err}
	}
	return err
}

// damagedError is the error of a read of snapshot sn that met a missing
// or corrupt object (err): it matches ErrDamaged and err.
type damagedError struct {
	sn  record
	err error
}

func (e *damagedError) Error() string {
	return fmt.Sprintf("%v: snapshot %s of %s: %v", ErrDamaged, e.sn.ID.Short(), e.sn.Project, e.err)
}

func (e *damagedError) Unwrap() []error { return []error{ErrDamaged, e.err} }

// recheckMissing returns err, the error of a read under ss. When it is
// that of a snapshot whose pack is missing, on a store whose records are
// a journal's cache (a bucket), it first brings the records fully up to
// date: gc may have deleted the packs of a snapshot that another machine
// dropped since they last were. A snapshot gone from them was dropped,
// and the error says so in one line; one still there is damaged (err).
// The caller holds the store lock, outside any transaction.
func (ss *hold) recheckMissing(ctx context.Context, err error) error {
	var d *damagedError
	if !errors.As(err, &d) || !errors.Is(err, cas.ErrMissingPack) || !ss.Locked() || !ss.s.repo.Backend().Features().Journaled {
		return err
	}
	if _, rerr := ss.s.repo.Backend().Refresh(ctx, true); rerr != nil {
		return err
	}
	kept := false
	if rerr := ss.Read(func(v view) error {
		snaps, err := v.Tx.Snapshots(d.sn.Project)
		kept = slices.ContainsFunc(snaps, func(sn record) bool { return sn.ID == d.sn.ID })
		return err
	}); rerr != nil || kept {
		return err
	}
	return fmt.Errorf("snapshot %s: %w in %s: it was dropped elsewhere (another machine or process), and gc has deleted its data; casckpt list shows the snapshots left", d.sn.ID.Short(), ErrNotFound, workdirName(d.sn.Project))
}
