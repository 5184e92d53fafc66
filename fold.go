package casckpt

import (
	"context"
	"maps"
	"slices"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/repo"
)

// A turn's small packs are inline, in the database (repo.InlineMax); once
// there are foldAfterPacks of them, or foldAfterBytes, the snapshot that
// counts them folds them into one pack file on its way out. In W3 (keep
// 20) the automatic collection, every 8 drops, merges them first (a sweep
// rewrites small packs, inline ones included), so a fold is for stores
// that drop nothing. Variables, so that tests fold early.
var (
	foldAfterPacks       = 64
	foldAfterBytes int64 = 1 << 20
)

// newWriter returns a Writer for a turn's objects (repo.Repo.NewWriter),
// writing no inline pack with Options.FilePacksOnly.
func (s *Store) newWriter(existing cas.Existing) *cas.Writer {
	w := s.repo.NewWriter(existing)
	if s.opts.FilePacksOnly {
		w.SetInline(0)
	}
	return w
}

// noteInline notes in res the bytes of the inline packs of tx, and
// whether they call for a fold.
func noteInline(tx *index.Tx, res *SnapshotResult) {
	n, size := tx.InlineBytes()
	res.inlineBytes, res.foldDue = size, n >= foldAfterPacks || size >= foldAfterBytes
}

// foldInline moves every inline pack into one pack file (cas.FoldInline),
// in a write transaction of its own after the turn's commit, under the
// hold's shared lock; on a backend with deltas, the new versions of
// files and trees go in as deltas of the versions before (DeltaBases). The turn is committed already: a failure only
// postpones the fold to the next turn, and is returned to be logged.
func (ss *hold) foldInline(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	var fold *cas.Sweep
	err := ss.Update(func(tx *index.Tx) (err error) {
		var bases func(func(cas.ID) bool) (map[cas.ID]cas.ID, error)
		if ss.s.repo.Backend().Features().Deltas {
			_, records, err := repo.LoadProjects(tx, repo.ProjectState)
			if err != nil {
				return err
			}
			objects := cas.NewStore(ss.s.repo.Packs(), tx.Objects())
			defer objects.Close()
			bases = repo.DeltaBases(ctx, objects, slices.Collect(maps.Values(records)))
		}
		fold, err = cas.FoldInline(ctx, tx.Objects(), ss.s.repo.Packs(), bases)
		return err
	})
	if err != nil {
		if fold != nil {
			fold.Abort()
		}
		ss.s.opts.Logger.Debug("folding the inline packs postponed", "err", err)
	}
	return err
}
