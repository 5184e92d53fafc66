package casckpt

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/casckpt/casckpt/index"
)

// rebuildDamagedCache replaces the damaged cache database of a store in a
// bucket with one brought up to date from the bucket, as a deleted cache
// is: the bucket is the truth, so nothing is lost and nobody has to run
// repair. It takes the cache's exclusive lock (waiting until deadline) and
// drops the damaged database rather than keeping it, as repair does.
func (s *Store) rebuildDamagedCache(ctx context.Context, deadline time.Time) error {
	lock, err := lockStore(ctx, s.lockPath(), true, deadline, s.opts.LockTimeout)
	if err != nil {
		return err
	}
	defer lock.unlock()
	s.opts.Logger.Warn("the cache database is damaged: rebuilding it from the bucket", "cache", s.dir)
	kept, err := s.db.Rebuild(s.opts.Now(), func(*index.Tx) error { return nil })
	if err != nil {
		return err
	}
	if kept != "" {
		_ = os.Remove(kept)
	}
	return s.remote.sync(ctx, s, true)
}

// cacheDamaged reports whether err says the cache database of a store in a
// bucket is damaged, which a rebuild from the bucket mends.
func (s *Store) cacheDamaged(err error) bool {
	return s.remote != nil && errors.Is(err, index.ErrDamaged)
}
