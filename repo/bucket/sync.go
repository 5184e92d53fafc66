package bucket

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/s3store"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/remote"
)

// Sync's tuning.
const (
	// skewMargin is how far before the watermark a sync lists again, for
	// writers whose clocks run behind this machine's.
	skewMargin = 15 * time.Minute
	// defaultSyncEvery: a store in a bucket is brought up to date at most
	// this often (each command of the CLI, a process, syncs once); see
	// Backend.syncEvery.
	defaultSyncEvery = time.Second
	// syncParallel bounds the GETs of one sync in flight.
	syncParallel = 8
)

// fetched is what a sync read of the bucket: the commits and dropped
// markers that the cache has not applied, the pins, and the tables of the
// packs the new commits name.
type fetched struct {
	commits []fetchedCommit
	dropped []droppedKey
	pins    map[cas.ID]bool
	// rejected are the objects the fleet key refused, not yet recorded:
	// key and why.
	rejected map[string]string
	tables   map[[16]byte]cas.SalvagedPack
	newest   time.Time       // the newest key time listed
	gcKeys   map[string]bool // every pending and deleted list of gc
	gcLists  []gcList        // those the cache has not applied
	listed   map[string]bool // with full: every commit key listed
}

// gcList is a pending or deleted list of gc (see internal/remote).
type gcList struct {
	key     string
	deleted bool
	packs   [][16]byte
	// damaged says why the list is skipped (it is larger than any list,
	// so no gc deletes by it either); "" if it is not.
	damaged string
}

// droppedKey is a dropped marker listed: its key and the snapshot it
// names.
type droppedKey struct {
	key string
	id  cas.ID
}

type fetchedCommit struct {
	key  string
	c    remote.Commit
	ok   bool // decoded, and signed when there is a fleet key
	gone bool // deleted since the listing
	// rejected says why the fleet key refused it ("": it did not).
	rejected string
	// damaged says why the commit is skipped and named by verify and
	// status: it does not decode, is too large, or names a pack of
	// another size than it says ("" if none of these).
	damaged string
}

// sync brings the cache up to date with the bucket (at most every
// syncEvery; force: now). The caller holds the store lock.
func (b *Backend) sync(ctx context.Context, force bool) error {
	return b.syncFrom(ctx, force, false)
}

// syncFrom is sync; with full, it lists every commit and dropped marker
// in the bucket, not only those after the watermark (as gc does before it
// marks).
func (b *Backend) syncFrom(ctx context.Context, force, full bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !force && !b.synced.IsZero() && time.Since(b.synced) < b.syncEvery {
		return nil
	}
	var mark time.Time
	var probed, viewed bool
	if err := b.db.View(func(tx *index.Tx) error {
		mark, probed = tx.Journal().Watermark(), tx.Journal().Probed()
		_, viewed = tx.Journal().View()
		return b.checkView(tx)
	}); err != nil {
		return err
	}
	from := mark
	if full {
		from = time.Time{}
	}
	started := time.Now() // before the listing: what it saw of gc is as old as this
	f, err := b.fetch(ctx, from)
	if err != nil {
		return err
	}
	if full {
		if err := b.checkComplete(f.listed); err != nil {
			return err
		}
	}
	// The watermark moves with the newest key listed even when the cache
	// had applied it (its own commit): the next listing starts there.
	if len(f.commits) > 0 || len(f.dropped) > 0 || len(f.gcLists) > 0 || len(f.rejected) > 0 || !probed || !viewed || f.newest.After(mark) || b.pinsDiffer(f.pins) {
		if err := b.db.Update(func(tx *index.Tx) error { return b.applyFetched(tx, f, mark) }); err != nil {
			return err
		}
		b.logger.Debug("cache brought up to date with the bucket", "store", b.url, "commits", len(f.commits), "dropped", len(f.dropped), "watermark", f.newest)
	}
	b.synced, b.gcKeys = started, f.gcKeys
	return nil
}

// fetch lists the bucket after watermark mark (less skewMargin) and reads
// what the cache lacks.
func (b *Backend) fetch(ctx context.Context, mark time.Time) (*fetched, error) {
	from := time.Time{}
	if !mark.IsZero() {
		from = mark.Add(-skewMargin)
	}
	f, commitKeys, oversized, err := b.list(ctx, from)
	if err != nil {
		return nil, err
	}
	if from.IsZero() {
		f.listed = make(map[string]bool, len(commitKeys))
		for _, k := range commitKeys {
			f.listed[k] = true
		}
	}
	known, commitKeys, gcKeys, err := b.unapplied(f, commitKeys)
	if err != nil {
		return nil, err
	}
	if err := b.readCommits(ctx, f, commitKeys, oversized); err != nil {
		return nil, err
	}
	if err := b.readGCLists(ctx, f, gcKeys, len(known) > 0); err != nil {
		return nil, err
	}
	return f, b.readTables(ctx, f, known)
}

// list lists the commits, the dropped markers and gc's lists after from,
// and every pin, into a new fetched, and returns the commit keys with
// those larger than any commit.
func (b *Backend) list(ctx context.Context, from time.Time) (*fetched, []string, map[string]bool, error) {
	f := &fetched{pins: map[cas.ID]bool{}, tables: map[[16]byte]cas.SalvagedPack{}, gcKeys: map[string]bool{}, rejected: map[string]string{}}
	var mu sync.Mutex // f.rejected, from the listings at once
	reject := func(key string, err error) {
		mu.Lock()
		f.rejected[key] = rejectReason(err)
		mu.Unlock()
	}
	// The three listings go out at once: on a real bucket each costs a
	// round trip of tens of milliseconds, and a no-change snapshot makes
	// no other request.
	var commitKeys []string
	var commitsNewest, droppedNewest time.Time
	// A commit larger than any commit is damaged before it is read (only
	// the listing of commits writes the map).
	oversized := map[string]bool{}
	var g errgroup.Group
	g.Go(func() error {
		return b.objects.ListInfo(ctx, remote.CommitsDir, remote.StartAfter(remote.CommitsDir, from), func(o s3store.ObjectInfo) error {
			if at, _, ok := remote.ParseTimed(remote.CommitsDir, o.Key); ok {
				commitKeys = append(commitKeys, o.Key)
				commitsNewest = later(commitsNewest, at)
				if o.Size > remote.MaxCommit {
					oversized[o.Key] = true
				}
			}
			return nil
		})
	})
	g.Go(func() error {
		return b.objects.ListAfter(ctx, remote.DroppedDir, remote.StartAfter(remote.DroppedDir, from), func(key string) error {
			if isPackList(key) { // after the dropped markers: always listed
				f.gcKeys[key] = true
				return nil
			}
			name, err := b.key.OpenName(key)
			if err != nil {
				reject(key, err)
			} else if at, id, ok := remote.ParseTimed(remote.DroppedDir, name); ok {
				f.dropped = append(f.dropped, droppedKey{key, id})
				droppedNewest = later(droppedNewest, at)
			}
			return nil
		})
	})
	g.Go(func() error {
		return b.objects.ListAfter(ctx, remote.PinsDir, "", func(key string) error {
			name, err := b.key.OpenName(key)
			if err != nil {
				reject(key, err)
			} else if id, ok := remote.ParsePin(name); ok {
				f.pins[id] = true
			}
			return nil
		})
	})
	if err := g.Wait(); err != nil {
		return nil, nil, nil, err
	}
	f.newest = later(commitsNewest, droppedNewest)
	return f, commitKeys, oversized, nil
}

// unapplied leaves in f, and returns of commitKeys, what the cache has not
// applied, with the keys of gc's lists it has not applied and the packs
// it knows. A cache that knows a pack checks the horizon (checkHorizon).
func (b *Backend) unapplied(f *fetched, commitKeys []string) (known map[[16]byte]bool, _ []string, gcKeys []string, _ error) {
	known = map[[16]byte]bool{}
	err := b.db.View(func(tx *index.Tx) error {
		packs, err := tx.Objects().Packs()
		if err != nil {
			return err
		}
		for _, p := range packs {
			known[p.Name] = true
		}
		if len(packs) > 0 { // a cache that knows no pack can reuse none
			if err := b.checkHorizon(tx, f.gcKeys); err != nil {
				return err
			}
		}
		commitKeys = slices.DeleteFunc(commitKeys, tx.Journal().Applied)
		f.dropped = slices.DeleteFunc(f.dropped, func(d droppedKey) bool { return tx.Journal().Applied(d.key) })
		for key := range f.rejected {
			if tx.Journal().Applied(key) {
				delete(f.rejected, key) // recorded already
			}
		}
		for key := range f.gcKeys {
			if !tx.Journal().Applied(key) {
				gcKeys = append(gcKeys, key)
			}
		}
		return nil
	})
	return known, commitKeys, gcKeys, err
}

// readCommits GETs the commits under keys, in parallel, each bounded by
// remote.MaxCommit; it GETs none of those the listing found oversized.
// One too large or that does not decode is damaged; one a newer casckpt
// wrote is not read (ok false).
func (b *Backend) readCommits(ctx context.Context, f *fetched, keys []string, oversized map[string]bool) error {
	f.commits = make([]fetchedCommit, len(keys))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(syncParallel)
	for i, key := range keys {
		g.Go(func() error {
			var data []byte
			err := fmt.Errorf("%w: listed larger", s3store.ErrTooLarge)
			if !oversized[key] {
				data, err = b.objects.Get(gctx, key, remote.MaxCommit)
			}
			switch {
			case errors.Is(err, fs.ErrNotExist):
				f.commits[i] = fetchedCommit{key: key, gone: true} // skipped
				return nil
			case errors.Is(err, s3store.ErrTooLarge):
				f.commits[i] = fetchedCommit{key: key, damaged: fmt.Sprintf("more than the %d bytes a commit may hold", remote.MaxCommit)}
				return nil
			case err != nil:
				return err
			}
			body, err := b.key.Open(key, data)
			if err != nil {
				f.commits[i] = fetchedCommit{key: key, rejected: rejectReason(err)} // skipped, named by verify
				return nil
			}
			c, err := remote.DecodeCommit(body)
			f.commits[i] = fetchedCommit{key: key, c: c, ok: err == nil}
			if err != nil && !errors.Is(err, remote.ErrNewerCommit) {
				f.commits[i].damaged = err.Error() // skipped, named by verify and status
			}
			return nil
		})
	}
	return g.Wait()
}

// errBehindHorizon is the error of a sync of a cache that may have missed
// a deleted list gc removed behind its horizon: the cache must be rebuilt
// (docs/bucket.md, "Horizon").
var errBehindHorizon = errors.New("the cache is behind the bucket's gc horizon")

// checkHorizon returns errBehindHorizon when the horizon generations
// listed (among keys) skip one after the largest the cache applied.
func (b *Backend) checkHorizon(tx *index.Tx, keys map[string]bool) error {
	var applied uint64
	if err := tx.Journal().EachApplied(remote.HorizonDir, func(key string) error {
		if g, ok := remote.ParseHorizon(key); ok {
			applied = max(applied, g)
		}
		return nil
	}); err != nil {
		return err
	}
	for key := range keys {
		if g, ok := remote.ParseHorizon(key); ok && g > applied+1 && !keys[remote.HorizonKey(g-1)] {
			return errBehindHorizon
		}
	}
	return nil
}

// readGCLists GETs the pending, deleted and horizon lists under keys. A
// pending list gone since the listing is skipped, and so is a deleted one
// when the cache knows no pack (holds false); otherwise a deleted list the cache
// never applied was removed behind the horizon: errBehindHorizon. One that
// does not decode is an error, since the packs it names would be reused;
// one larger than remote.MaxPackList is damaged: no gc reads it either.
func (b *Backend) readGCLists(ctx context.Context, f *fetched, keys []string, holds bool) error {
	slices.Sort(keys)
	for _, key := range keys {
		data, err := b.objects.Get(ctx, key, remote.MaxPackList)
		if errors.Is(err, fs.ErrNotExist) && holds && !strings.HasPrefix(key, remote.PendingDir) {
			return errBehindHorizon
		} else if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if errors.Is(err, s3store.ErrTooLarge) {
			f.gcLists = append(f.gcLists, gcList{key: key, damaged: fmt.Sprintf("more than the %d bytes a list of gc may hold", remote.MaxPackList)})
			continue
		} else if err != nil {
			return err
		}
		// Applied whether signed or not: a list only makes the cache
		// avoid packs, and one ignored could make a writer reuse a pack
		// that a gc is deleting.
		if _, err := b.key.Open(key, data); err != nil {
			f.rejected[key] = rejectReason(err)
		}
		packs, err := remote.DecodePackList(remote.Unsealed(key, data))
		if err != nil {
			return fmt.Errorf("gc list %s in %s: %w: delete it, and run casckpt gc again", key, b.url, err)
		}
		f.gcLists = append(f.gcLists, gcList{key: key, deleted: !strings.HasPrefix(key, remote.PendingDir), packs: packs})
	}
	return nil
}

// readTables reads the table of every pack the new commits name that the
// cache does not know, with ranged reads of each pack's end. A pack that
// is gone is left out: verify reports the snapshots that needed it. A
// pack whose end is not a table, or that is not the size its commit
// says, makes that commit damaged.
func (b *Backend) readTables(ctx context.Context, f *fetched, known map[[16]byte]bool) error {
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(syncParallel)
	for i, fc := range f.commits {
		for _, p := range fc.c.Packs {
			if known[p.Name] {
				continue
			}
			known[p.Name] = true
			g.Go(func() error {
				name := cas.PackInfo{Name: p.Name}.FileName()
				entries, err := cas.ReadTableFromTail(p.Size, func(n int64) ([]byte, error) {
					return b.objects.ReadTail(gctx, name, p.Size, n)
				})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case errors.Is(err, fs.ErrNotExist):
				case errors.Is(err, cas.ErrBadPack):
					f.commits[i].damaged = fmt.Sprintf("pack %s: %v", name, err)
				case err != nil:
					return err
				default:
					f.tables[p.Name] = cas.SalvagedPack{Name: p.Name, Size: p.Size, Entries: entries}
				}
				return nil
			})
		}
	}
	return g.Wait()
}

// pinsDiffer reports whether the cache's pins are not the bucket's.
func (b *Backend) pinsDiffer(pins map[cas.ID]bool) bool {
	differ := false
	_ = b.db.View(func(tx *index.Tx) error {
		return tx.EachProject(func(ps index.ProjectSnapshots) error {
			for _, sn := range ps.Snapshots {
				differ = differ || sn.Pinned != pins[sn.ID]
			}
			return nil
		})
	})
	return differ
}

// isPackList reports whether key is a pending, deleted or horizon list of
// gc.
func isPackList(key string) bool {
	_, horizon := remote.ParseHorizon(key)
	return horizon || remote.IsGCKey(remote.PendingDir, key) || remote.IsGCKey(remote.DeletedDir, key)
}

// checkComplete refuses a full listing of commits that lacks a commit the
// cache applied: commits are never deleted, so the listing was cut short.
func (b *Backend) checkComplete(listed map[string]bool) error {
	return b.db.View(func(tx *index.Tx) error {
		damaged := map[string]bool{} // deleted on purpose, as verify says to
		if err := tx.Journal().EachDamaged(func(key, _ string) error { damaged[key] = true; return nil }); err != nil {
			return err
		}
		return tx.Journal().EachApplied(remote.CommitsDir, func(key string) error {
			if !listed[key] && !damaged[key] {
				return fmt.Errorf("the listing of %s lacks commit %s, which this cache read before: it looks incomplete, so nothing is deleted: try again later (or run casckpt repair if that commit was deleted on purpose)", b.url, key)
			}
			return nil
		})
	})
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// rejectReason is why the fleet key refused an object, as verify says it.
func rejectReason(err error) string {
	if errors.Is(err, remote.ErrUnsigned) {
		return remote.ErrUnsigned.Error()
	}
	return remote.ErrBadSignature.Error()
}
