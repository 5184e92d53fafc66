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
			if n > 0 && i >= n {
				break
			}
			parent := manifest.EmptyTreeID
			if i+1 < len(snaps) {
				parent = snaps[i+1].Root
			}
			e := ListEntry{Snapshot: hostSnapshot(sn)}
			changes, err := manifest.Diff(ctx, v.objects, parent, sn.Root)
			var files []FileDiff
			if err == nil {
				files, err = fileDiffs(ctx, changes, storeContent{v.objects}, storeContent{v.objects}, false)
			}
			switch {
			case errors.Is(damaged(sn, err), ErrDamaged) || errors.Is(err, manifest.ErrTooLarge):
				e.Damaged = true // a bomb-like tree is no project's, and must not hide the others
			case err != nil:
				return err
			default:
				e.FilesChanged, e.Insertions, e.Deletions = totals(files)
			}
			out = append(out, e)
		}
		return nil
	})
	return out, err
}
