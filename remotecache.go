package casckpt

import (
	"context"
	"errors"
	"os"

	"github.com/casckpt/casckpt/index"
)

// replaceCache rebuilds the cache of a store in a bucket from the bucket,
// as a deleted cache is, when a sync found it unusable (why): damaged on
// disk, or behind the bucket's gc horizon (errBehindHorizon). The bucket
// is the truth, so nothing is lost and nobody has to run repair. It takes
// the cache's exclusive lock (the caller holds none) and, unlike repair,
// does not keep the old database.
func (s *Store) replaceCache(ctx context.Context, why string) error {
	s.opts.Logger.Debug(why+": rebuilding it from the bucket", "store", s.remote.url, "cache", s.dir)
	ss, err := s.begin(ctx, true, true)
	if err != nil {
		return err
	}
	defer ss.end()
	return s.rebuildCacheDiscarding(ctx)
}

// rebuildCacheDiscarding is rebuildCache without keeping the old database
// (a cache holds nothing the bucket lacks). The caller holds the cache's
// exclusive lock.
func (s *Store) rebuildCacheDiscarding(ctx context.Context) error {
	old, err := s.rebuildCache(ctx)
	if old != "" {
		os.Remove(old)
	}
	return err
}

// cacheDamaged reports whether err says the cache database of a store in a
// bucket is damaged, which a rebuild from the bucket mends.
func (s *Store) cacheDamaged(err error) bool {
	return s.remote != nil && errors.Is(err, index.ErrDamaged)
}
