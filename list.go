package casckpt

import (
	"context"
	"errors"
	"fmt"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/manifest"
)

// damaged turns a missing or corrupt object met while reading snapshot sn
// into ErrDamaged; other errors pass through.
func damaged(sn record, err error) error {
	if errors.Is(err, cas.ErrCorrupt) || errors.Is(err, cas.ErrNotFound) {
		return fmt.Errorf("%w: snapshot %s of %s: %w", ErrDamaged, sn.ID.Short(), sn.Project, err)
	}
	return err
}

// ListEntry is a snapshot with its change from the next older one (the
// oldest: from an empty tree).
type ListEntry struct {
	Snapshot
	// Number is the snapshot's place among the project's snapshots,
	// newest first from 1: @Number refers to it (see Ref).
	Number       int
	FilesChanged int64
	Insertions   int64
	Deletions    int64
	// Damaged is set when the change could not be computed because the
	// snapshot's data is missing or corrupt, or names more than
	// manifest.MaxEntries paths.
	Damaged bool
}

// List returns the snapshots of the project in dir, newest first; at most n
// of them when n > 0.
func (s *Store) List(ctx context.Context, dir string, n int) ([]ListEntry, error) {
	return s.ListSession(ctx, dir, "", n)
}

// ListSession is List of the snapshots labelled with session only (all
// when session is ""). Each snapshot's change is still from the next older
// snapshot of the project, whatever its session.
func (s *Store) ListSession(ctx context.Context, dir, session string, n int) ([]ListEntry, error) {
	workdir, err := knownWorkdir(dir)
	if err != nil {
		return nil, err
	}
	out := []ListEntry{}
	err = s.read(ctx, func(v view) error {
		snaps, err := v.tx.Snapshots(workdir)
		if err != nil {
			return err
		}
		for i, sn := range snaps {
			if n > 0 && len(out) >= n {
				break
			}
			if session != "" && sn.Session != session {
				continue
			}
			parent := manifest.EmptyTreeID
			if i+1 < len(snaps) {
				parent = snaps[i+1].Root
			}
			c, err := countChanges(ctx, v, parent, sn.Root)
			if err != nil {
				return err
			}
			out = append(out, ListEntry{Snapshot: hostSnapshot(sn), Number: i + 1, FilesChanged: c.files, Insertions: c.insertions, Deletions: c.deletions, Damaged: c.damaged})
		}
		return nil
	})
	return out, err
}

// changeCounts sum up the change from one tree to another.
type changeCounts struct {
	files, insertions, deletions int64
	// damaged: the trees' data is missing or corrupt, or names more than
	// manifest.MaxEntries paths, so nothing was counted.
	damaged bool
}

// countChanges counts the files changed and the lines inserted and deleted
// from tree from to tree to.
func countChanges(ctx context.Context, v view, from, to cas.ID) (changeCounts, error) {
	changes, err := manifest.Diff(ctx, v.objects, from, to)
	var files []FileDiff
	if err == nil {
		files, err = fileDiffs(ctx, changes, storeContent{v.objects}, storeContent{v.objects}, false)
	}
	switch {
	case errors.Is(err, cas.ErrCorrupt) || errors.Is(err, cas.ErrNotFound) || errors.Is(err, manifest.ErrTooLarge):
		return changeCounts{damaged: true}, nil // a bomb-like tree is no project's, and must not hide the others
	case err != nil:
		return changeCounts{}, err
	}
	var c changeCounts
	c.files, c.insertions, c.deletions = totals(files)
	return c, nil
}
