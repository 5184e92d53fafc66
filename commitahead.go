package casckpt

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/statcache"
	"github.com/casckpt/casckpt/repo"
)

// batchObjects is about how many objects a big snapshot commits per
// transaction ahead of its record (commitAhead, cas.Writer.CommitInParts),
// and the size past which a snapshot is big: a smaller one commits in the
// one transaction of its record.
// One transaction holding every index entry of a million-file tree took
// more memory than the rest of the snapshot.
var batchObjects = 1 << 17

// batchStamps bounds the stat cache entries (files and subdirectories) a
// transaction of commitAhead writes.
var batchStamps = 1 << 18

// commitAhead commits, for a big snapshot in a store whose records are
// its own (not a journal's cache: a bucket's journal publishes packs with
// the record that names them), p's flushed packs and their objects and
// then its stat cache in transactions of their own, before the one of its
// record: that one then holds only the record. The packs are durable
// (Flush) before the first. A crash in between leaves indexed objects
// that no record names, which the next collection removes (and the stat
// cache records naming their trees with them, index.DropStatEntries): the
// collection waits for this process's shared lock, so none runs before
// the record is committed.
func (ss *hold) commitAhead(ctx context.Context, p *pendingSnapshot) error {
	if ss.s.repo.Backend().Features().Journaled || p.w.Uncommitted() <= batchObjects {
		return nil
	}
	update := func(fn func(idx cas.IndexWriter, replace bool) error) error {
		return ss.Update(func(tx *index.Tx) error { return fn(tx.Objects(), p.healed || repo.Relocates(tx)) })
	}
	if err := p.w.CommitInParts(ctx, update, batchObjects); err != nil {
		return notRecorded(err)
	}
	for i, put := range statCacheBatches(p.scanned.CachePut) {
		remove := p.scanned.CacheRemove
		if i > 0 {
			remove = nil // removed with the first part
		}
		if err := ss.Update(func(tx *index.Tx) error { return tx.UpdateStatCache(p.workdir, put, remove) }); err != nil {
			return notRecorded(err)
		}
	}
	p.scanned.CachePut, p.scanned.CacheRemove = nil, nil // written
	return nil
}

// notRecorded says of err, a failure of commitAhead, what it left: the
// parts committed before it are in the index, named by no record.
func notRecorded(err error) error {
	return fmt.Errorf("%w (no snapshot was recorded; the next gc removes what it stored)", err)
}

// statCacheBatches splits a stat cache update into parts of about
// batchStamps entries, in the order of the directories: at least one,
// which may be empty.
func statCacheBatches(put map[string]statcache.Dir) []map[string]statcache.Dir {
	out := []map[string]statcache.Dir{{}}
	cur, n := out[0], 0
	for _, d := range slices.Sorted(maps.Keys(put)) {
		if n >= batchStamps {
			cur, n = map[string]statcache.Dir{}, 0
			out = append(out, cur)
		}
		cur[d] = put[d]
		n += len(put[d].Stamps)
	}
	return out
}
