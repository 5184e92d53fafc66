package casckpt

import (
	"context"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/repo"
)

// updateProject resolves refs in the project of dir and runs fn on each
// resolved snapshot inside one write transaction.
func (s *Store) updateProject(ctx context.Context, dir string, refs []Ref, fn func(j repo.Journal, tx *index.Tx, sn record) error) ([]cas.ID, error) {
	workdir, err := knownWorkdir(dir)
	if err != nil {
		return nil, err
	}
	ss, err := s.begin(ctx, false, false)
	if err != nil {
		return nil, err
	}
	defer ss.End()
	ids := []cas.ID{}
	if !s.repo.Exists() {
		// No store: every reference is unknown.
		_, _, err := resolve(nil, refs[0], workdir)
		return ids, err
	}
	err = ss.Update(func(tx *index.Tx) error {
		snaps, err := tx.Snapshots(workdir)
		if err != nil {
			return err
		}
		var chosen []record
		for _, r := range refs { // resolve all before changing any
			sn, _, err := resolve(snaps, r, workdir)
			if err != nil {
				return err
			}
			chosen = append(chosen, sn)
		}
		for _, sn := range chosen {
			if err := fn(ss.Journal(), tx, sn); err != nil {
				return err
			}
			ids = append(ids, sn.ID)
		}
		return nil
	})
	return ids, err
}

// Pin marks a snapshot to survive every automatic rule (keep, size cap,
// stale, orphan).
func (s *Store) Pin(ctx context.Context, dir string, ref Ref) (cas.ID, error) {
	return s.setPinned(ctx, dir, ref, true)
}

// Unpin clears a snapshot's pin.
func (s *Store) Unpin(ctx context.Context, dir string, ref Ref) (cas.ID, error) {
	return s.setPinned(ctx, dir, ref, false)
}

func (s *Store) setPinned(ctx context.Context, dir string, ref Ref, pinned bool) (cas.ID, error) {
	ids, err := s.updateProject(ctx, dir, []Ref{ref}, func(j repo.Journal, tx *index.Tx, sn record) error {
		sn.Pinned = pinned
		if err := tx.PutSnapshot(sn); err != nil {
			return err
		}
		return j.Pinned(ctx, sn.ID, pinned)
	})
	if err != nil {
		return cas.ID{}, err
	}
	return ids[0], nil
}

// Forget drops the named snapshots, pinned or not. Their space is
// reclaimed by garbage collection.
func (s *Store) Forget(ctx context.Context, dir string, refs ...Ref) ([]cas.ID, error) {
	if len(refs) == 0 {
		return []cas.ID{}, nil
	}
	return s.updateProject(ctx, dir, refs, func(j repo.Journal, tx *index.Tx, sn record) error {
		if err := tx.DeleteSnapshot(sn); err != nil {
			return err
		}
		if err := tx.AddPendingDrops(1); err != nil { // its objects wait for a collection
			return err
		}
		return j.Dropped(ctx, tx, sn.ID)
	})
}
