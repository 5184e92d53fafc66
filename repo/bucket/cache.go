package bucket

import (
	"context"
	"errors"
	"os"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/repo"
)

// Refresh brings the cache up to date with the bucket (at most every
// syncEvery; with force, now) under the cache's shared lock, and returns
// the journal of the operation, which remembers what the sync saw of gc.
// A cache that the sync found unusable (damaged on disk, behind the
// bucket's gc horizon, built for another machine or fleet key) yields an
// error that wraps repo.ErrStale: the caller rebuilds it (Rebuild) and
// tries again. The bucket is the truth, so nothing is lost and nobody has
// to run repair.
func (b *Backend) Refresh(ctx context.Context, force bool) (repo.Journal, error) {
	err := b.sync(ctx, force)
	switch {
	case err == nil:
		return &journal{b: b, seen: b.seen()}, nil
	case errors.Is(err, index.ErrDamaged):
		return nil, staleError{"the cache database is damaged", err}
	case errors.Is(err, errCacheView):
		return nil, staleError{errCacheView.Error(), err}
	case errors.Is(err, errBehindHorizon):
		return nil, staleError{"the cache is behind the bucket's gc horizon", err}
	}
	return nil, err
}

// staleError is a sync's error that a rebuild of the cache mends: why,
// and the error.
type staleError struct {
	why string
	err error
}

func (e staleError) Error() string        { return e.err.Error() }
func (e staleError) Unwrap() error        { return e.err }
func (e staleError) Is(target error) bool { return target == repo.ErrStale }

// Rebuild replaces the cache's index with an empty one brought up to
// date from the bucket, as a deleted cache is, and returns the name under
// which the old one is kept (with keep; without, it is removed: a cache
// holds nothing the bucket lacks). The projects the old one recorded as
// this machine's own are kept (when it can be read). The caller holds the
// cache's exclusive lock.
func (b *Backend) Rebuild(ctx context.Context, keep bool) (repo.Rebuilt, error) {
	var res repo.Rebuilt
	b.logger.Debug("rebuilding the cache from the bucket", "store", b.url, "cache", b.dir)
	own := b.ownProjects() // what the bucket cannot tell: kept
	old, err := b.db.Rebuild(b.now(), func(tx *index.Tx) error {
		for _, w := range own {
			if err := tx.Journal().SetOwn(w); err != nil {
				return err
			}
		}
		return tx.Journal().SetView(b.view())
	})
	if err == nil {
		err = b.sync(ctx, true)
	}
	if !keep && old != "" {
		os.Remove(old)
		old = ""
	}
	res.OldDatabase = old
	if err != nil {
		return res, err
	}
	return res, b.db.View(func(tx *index.Tx) error { return count(tx, &res) })
}

// count counts into res what the rebuilt records in tx hold.
func count(tx *index.Tx, res *repo.Rebuilt) error {
	packs, err := tx.Objects().Packs()
	res.PacksRead = len(packs)
	if err != nil {
		return err
	}
	if err := tx.Objects().ForEachObject(func(cas.Location) error { res.ObjectsIndexed++; return nil }); err != nil {
		return err
	}
	return tx.EachProject(func(ps index.ProjectSnapshots) error {
		res.Projects++
		res.Snapshots += len(ps.Snapshots)
		turns, err := tx.Turns(ps.Workdir)
		res.Turns += len(turns)
		return err
	})
}
