package repo

import (
	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
)

// CountCache remembers the change counts that a read computed because the
// records' cache of them (index.Tx.ChangeCounts) lacked them, for
// Hold.StoreCounts to store once the read is over.
type CountCache struct {
	missing map[[2]cas.ID]index.Counts
}

// Remember keeps the counts of the change from tree from to tree to.
func (c *CountCache) Remember(from, to cas.ID, files, insertions, deletions int64) {
	if c.missing == nil {
		c.missing = map[[2]cas.ID]index.Counts{}
	}
	c.missing[[2]cas.ID{from, to}] = index.Counts{Files: files, Insertions: insertions, Deletions: deletions}
}

// StoreCounts stores the counts c remembered, under the hold's lock (so
// no collection deletes their trees in between), in one write
// transaction when the database is free at once. It is best effort: when
// the store is busy, read-only or missing, the counts are simply
// computed again next time.
func (h *Hold) StoreCounts(c *CountCache) {
	if h.lock == nil || len(c.missing) == 0 {
		return
	}
	_ = h.r.db.TryUpdate(func(tx *index.Tx) error {
		for k, n := range c.missing {
			if err := tx.PutChangeCounts(k[0], k[1], n); err != nil {
				return err
			}
		}
		return nil
	})
}
