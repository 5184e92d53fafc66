package casckpt

import (
	"context"
	"errors"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/manifest"
	"github.com/casckpt/casckpt/repo"
)

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
	// manifest.MaxEntries paths. Counts once computed are cached in the
	// index (by the pair of trees) and not read again: damage done to the
	// data after that shows in Verify, not here.
	Damaged bool
	// TurnTitle is the title of the turn the snapshot is labelled with
	// (see TurnInfo.Title); "" when it has none.
	TurnTitle string
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
	workdir, err := s.readWorkdir(dir)
	if err != nil {
		return nil, err
	}
	out := []ListEntry{}
	err = s.readCounting(ctx, func(v view, cc *countCache) error {
		snaps, err := v.Tx.Snapshots(workdir)
		if err != nil {
			return err
		}
		turns, err := v.Tx.Turns(workdir)
		if err != nil {
			return err
		}
		titles := make(map[string]string, len(turns))
		for _, t := range turns {
			titles[t.ID] = t.Title
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
			c, err := cc.count(ctx, v, parent, sn.Root)
			if err != nil {
				return err
			}
			out = append(out, ListEntry{Snapshot: hostSnapshot(sn), Number: i + 1, FilesChanged: c.files, Insertions: c.insertions, Deletions: c.deletions, Damaged: c.damaged,
				TurnTitle: titles[sn.Turn]})
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

// countCache looks change counts up in the index's cache and remembers
// those it had to compute, to store them once the read is over.
type countCache struct {
	repo.CountCache
}

// count returns the change from tree from to tree to: cached, or computed
// (and remembered unless the trees are damaged).
func (cc *countCache) count(ctx context.Context, v view, from, to cas.ID) (changeCounts, error) {
	if c, ok := v.Tx.ChangeCounts(from, to); ok {
		return changeCounts{files: c.Files, insertions: c.Insertions, deletions: c.Deletions}, nil
	}
	c, err := countChanges(ctx, v, from, to)
	if err == nil && !c.damaged {
		cc.Remember(from, to, c.files, c.insertions, c.deletions)
	}
	return c, err
}

// readCounting is Store.read with a count cache: the counts fn computed
// are stored after the read, under the same shared lock (so no collection
// deletes their trees in between), in one write transaction when the
// database is free at once. Caching is best effort: when the store is
// busy, read-only or missing, the counts are simply computed again next
// time, and a failure to cache is never fn's.
func (s *Store) readCounting(ctx context.Context, fn func(v view, cc *countCache) error) error {
	ss, err := s.begin(ctx, false, false)
	if err != nil {
		return err
	}
	defer ss.End()
	var cc countCache
	if err := ss.Read(func(v view) error { return fn(v, &cc) }); err != nil {
		return err
	}
	ss.StoreCounts(&cc.CountCache)
	return nil
}

// countChanges counts the files changed and the lines inserted and deleted
// from tree from to tree to.
func countChanges(ctx context.Context, v view, from, to cas.ID) (changeCounts, error) {
	changes, err := manifest.Diff(ctx, v.Objects, from, to)
	var files []FileDiff
	if err == nil {
		files, err = fileDiffs(ctx, changes, storeContent{v.Objects}, storeContent{v.Objects}, DiffOptions{})
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
