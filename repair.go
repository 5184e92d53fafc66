package casckpt

import (
	"context"
	"errors"
	"os"

	"github.com/casckpt/casckpt/repo"
)

// RepairResult says what Repair rebuilt.
type RepairResult = repo.Rebuilt

// Repair rebuilds the store's records, for when they are damaged or lost
// (repo.Backend.Rebuild): from the packs of a store in a directory
// (repo.Salvage: every pack read and each object checked; the records
// from the backups every snapshot and turn stores in its pack, with the
// pins and numbers the old database still holds), and from the journal
// of a bucket store, as a deleted cache is. The old database is kept
// beside the new one. Run Verify afterwards: a snapshot whose data was in
// an unreadable part of a pack is reported damaged until a snapshot of
// files that still hold that data stores it again.
func (s *Store) Repair(ctx context.Context) (RepairResult, error) {
	if _, err := os.Stat(s.repo.PacksDir()); errors.Is(err, os.ErrNotExist) && !s.repo.Backend().Features().Journaled {
		return RepairResult{}, nil // nothing stored: nothing to repair
	}
	ss, err := s.begin(ctx, true, false)
	if err != nil {
		return RepairResult{}, err
	}
	defer ss.End()
	if !ss.Locked() {
		return RepairResult{}, nil // the store was cleared meanwhile: nothing to repair
	}
	return s.repo.Backend().Rebuild(ctx, true)
}
