package casckpt

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/s3store"
	"github.com/casckpt/casckpt/gc"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/remote"
)

// remoteGC is gc on a store in a bucket, in two phases (docs/remote.md):
// under the lease, after a full sync, it marks from every snapshot not
// dropped; it deletes the packs of every pending list older than the
// grace period by the server's clock that are still unneeded (their
// tables hold no live object), then, when no pending list is left, writes
// a new one of the packs no snapshot needs. Writers never reuse a pack in
// a pending list, so a pack deleted is one no commit can name.
func (s *Store) remoteGC(ctx context.Context) (GCResult, error) {
	ss, err := s.begin(ctx, true, false)
	if err != nil {
		return GCResult{}, err
	}
	defer ss.end()
	return ss.remoteCollect(ctx)
}

// remoteCollect is remoteGC under the exclusive lock of the cache ss
// holds; a snapshot calls it when enough snapshots were dropped.
func (ss *session) remoteCollect(ctx context.Context) (GCResult, error) {
	var res GCResult
	s := ss.s
	r := s.remote
	l, err := r.takeLease(ctx)
	if err != nil {
		return res, err
	}
	defer l.release(context.WithoutCancel(ctx))
	pending, err := r.listPending(ctx)
	if err != nil {
		return res, err
	}
	err = r.syncFrom(ctx, s, true, true) // after the lease's time: see recheck
	if errors.Is(err, errBehindHorizon) || errors.Is(err, errCacheView) {
		if err = s.rebuildCacheDiscarding(ctx); err == nil {
			err = r.syncFrom(ctx, s, true, true)
		}
	}
	if err != nil {
		return res, fmt.Errorf("gc: %w; nothing was deleted", err)
	}
	m, err := s.markBucket(ctx)
	if err != nil {
		return res, err
	}
	waiting := false
	for _, p := range pending {
		if l.now.Sub(p.LastModified) <= r.grace {
			waiting = true
			continue
		}
		if err := r.deletePending(ctx, l, m, p.Key, &res); err != nil {
			return res, err
		}
	}
	if !waiting {
		if err := r.writePending(ctx, l, m); err != nil {
			return res, err
		}
	}
	if err := r.advanceHorizon(ctx, l); err != nil {
		return res, err
	}
	if err := r.syncFrom(ctx, s, true, false); err != nil { // the cache learns its own lists
		return res, err
	}
	return res, ss.update(func(tx *index.Tx) error { return tx.ClearPendingDrops() })
}

// bucketMark is what gc found live in the bucket.
type bucketMark struct {
	live      func(cas.ID) bool  // an object a kept snapshot or record needs
	livePacks map[[16]byte]bool  // packs the cache locates a live object in
	stored    map[[16]byte]int64 // the packs in the bucket
}

// markBucket marks from every snapshot of the (fully synced) cache and
// lists the packs in the bucket. It refuses when the cache could not read
// a commit whole, or lacks an object a snapshot needs.
func (s *Store) markBucket(ctx context.Context) (*bucketMark, error) {
	m := &bucketMark{livePacks: map[[16]byte]bool{}, stored: map[[16]byte]int64{}}
	err := s.db.View(func(tx *index.Tx) error {
		if key := tx.Remote().FirstUnread(); key != "" && tx.Remote().Rejected(key) {
			return fmt.Errorf("gc: commit %s in %s carries no valid fleet signature, so its packs cannot be told apart from garbage; nothing was deleted: if no machine of the fleet wrote it, delete it from the bucket and run casckpt repair (casckpt verify names every such object)", key, s.remote.url)
		} else if key != "" {
			return fmt.Errorf("gc: commit %s in %s could not be read whole (damaged, or written by a newer casckpt), so its packs cannot be told apart from garbage; nothing was deleted: upgrade casckpt, or delete that commit", key, s.remote.url)
		}
		objects := cas.NewStore(s.packs, tx.Objects())
		defer objects.Close()
		projects, records, err := loadProjects(tx)
		if err != nil {
			return err
		}
		graph, err := markProjects(ctx, objects, projects)
		if err != nil {
			return fmt.Errorf("gc: %w; nothing was deleted: run casckpt verify", err)
		}
		if err := checkLiveIndexed(graph, objects); err != nil {
			return err
		}
		backups := liveBackups(records, gc.Plan{})
		if err := addTurnBackups(tx, backups); err != nil {
			return err
		}
		m.live = func(id cas.ID) bool { return graph.Live(id) || backups[id] }
		return m.locateLive(tx)
	})
	if err != nil {
		return nil, err
	}
	err = s.remote.bucket.List(ctx, func(p cas.StoredPack) error {
		if name, ok := cas.PackName(p.Name); ok {
			m.stored[name] = p.Size
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("gc: %w; nothing was deleted", err)
	}
	return m, nil
}

// locateLive records the packs in which the cache locates a live object.
func (m *bucketMark) locateLive(tx *index.Tx) error {
	packs, err := tx.Objects().Packs()
	if err != nil {
		return err
	}
	names := map[uint32][16]byte{}
	for _, p := range packs {
		names[p.Number] = p.Name
	}
	return tx.Objects().ForEachObject(func(l cas.Location) error {
		if m.live(l.ID) {
			m.livePacks[names[l.Pack]] = true
		}
		return nil
	})
}

// unneeded returns, of the packs named, those stored in the bucket whose
// tables (one or two ranged GETs each) hold no live object, with the count
// of objects in them. A pack holding a live object is kept even when the
// object has another copy: some cache may locate it in this pack only. A
// pack whose table cannot be read is kept.
func (r *bucketStore) unneeded(ctx context.Context, m *bucketMark, names [][16]byte) (map[[16]byte]int, error) {
	out := map[[16]byte]int{}
	for _, name := range names {
		size, stored := m.stored[name]
		if !stored || m.livePacks[name] {
			continue
		}
		file := cas.PackInfo{Name: name}.FileName()
		entries, err := cas.ReadTableFromTail(size, func(n int64) ([]byte, error) {
			return r.bucket.ReadTail(ctx, file, size, n)
		})
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, cas.ErrBadPack) {
			continue // gone, or not a pack this gc can judge
		} else if err != nil {
			return nil, fmt.Errorf("gc: %w; nothing more was deleted", err)
		}
		dead := true
		for _, e := range entries {
			dead = dead && !m.live(e.ID)
		}
		if dead {
			out[name] = len(entries)
		}
	}
	return out, nil
}

// deletePending deletes the packs of the ripe pending list under key that
// are still unneeded, then the list: first a deleted list naming them, so
// every cache forgets them, then each pack.
func (r *bucketStore) deletePending(ctx context.Context, l *lease, m *bucketMark, key string, res *GCResult) error {
	b, err := r.bucket.Get(ctx, key, remote.MaxPackList)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // another gc finished it
	} else if errors.Is(err, s3store.ErrTooLarge) {
		return nil // damaged, as verify says: nothing is deleted by it
	} else if err != nil {
		return fmt.Errorf("gc: %w; nothing more was deleted", err)
	}
	names, err := remote.DecodePackList(remote.Unsealed(key, b)) // re-marked: signed or not
	if err != nil {
		return fmt.Errorf("gc: pending list %s: %w; nothing more was deleted: delete that list", key, err)
	}
	dead, err := r.unneeded(ctx, m, names)
	if err != nil {
		return err
	}
	if len(dead) > 0 {
		if err := l.renew(ctx); err != nil {
			return err
		}
		gone := sortedNames(dead)
		deleted := remote.GCKey(remote.DeletedDir, time.Now())
		if err := r.bucket.PutNew(ctx, deleted, r.key.Seal(deleted, remote.EncodePackList(gone))); err != nil {
			return fmt.Errorf("gc: %w; nothing more was deleted", err)
		}
		for _, name := range gone {
			if err := r.bucket.RemovePack(ctx, cas.PackInfo{Name: name}.FileName()); err != nil {
				return fmt.Errorf("gc: %w; the next gc deletes the rest", err)
			}
			res.ObjectsDeleted += dead[name]
			res.BytesFreed += m.stored[name]
			delete(m.stored, name)
		}
	}
	if err := r.bucket.Delete(ctx, key); err != nil {
		return fmt.Errorf("gc: %w", err)
	}
	return nil
}

// writePending writes a pending list of the packs in the bucket that no
// live snapshot needs (nothing when there are none).
func (r *bucketStore) writePending(ctx context.Context, l *lease, m *bucketMark) error {
	var names [][16]byte
	for name := range m.stored {
		if !m.livePacks[name] {
			names = append(names, name)
		}
	}
	dead, err := r.unneeded(ctx, m, names)
	if err != nil || len(dead) == 0 {
		return err
	}
	if err := l.renew(ctx); err != nil {
		return err
	}
	key := remote.GCKey(remote.PendingDir, time.Now())
	if err := r.bucket.PutNew(ctx, key, r.key.Seal(key, remote.EncodePackList(sortedNames(dead)))); err != nil {
		return fmt.Errorf("gc: %w", err)
	}
	return nil
}

func sortedNames(set map[[16]byte]int) [][16]byte {
	out := make([][16]byte, 0, len(set))
	for name := range set {
		out = append(out, name)
	}
	sort.Slice(out, func(i, j int) bool { return string(out[i][:]) < string(out[j][:]) })
	return out
}

// listPending lists the pending lists of gc with their Last-Modified.
func (r *bucketStore) listPending(ctx context.Context) ([]s3store.ObjectInfo, error) {
	var out []s3store.ObjectInfo
	err := r.bucket.ListInfo(ctx, remote.PendingDir, "", func(o s3store.ObjectInfo) error {
		if remote.IsGCKey(remote.PendingDir, o.Key) {
			out = append(out, o)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("gc: %w; nothing was deleted", err)
	}
	return out, nil
}

// lease is gc's hold of gc/lease: its key, its bytes (a random holder
// ID), its ETag, and the server's time when it was taken.
type lease struct {
	r    *bucketStore
	key  string
	data []byte
	etag string
	now  time.Time
}

// leaseKey names the lease every gc takes, remote.LeaseKey. A test gives
// each gc a key of its own (export_test.go) to run two gcs at once, which
// the two phases must keep safe without the lease.
var leaseKey = func() string { return remote.LeaseKey }

// leaseTTL is how long by the server's clock a lease not renewed lasts:
// the grace period, at most 10 minutes. A gc that runs longer may see its
// lease taken over; the two-phase rule keeps two gcs at once safe.
func (r *bucketStore) leaseTTL() time.Duration { return min(r.grace, 10*time.Minute) }

// takeLease creates gc/lease (If-None-Match), or takes over one older
// than the lease TTL by the server's clock (If-Match on its ETag).
func (r *bucketStore) takeLease(ctx context.Context) (*lease, error) {
	var id [16]byte
	rand.Read(id[:]) // never fails (crypto/rand)
	l := &lease{r: r, key: leaseKey(), data: []byte("casckpt gc " + hex.EncodeToString(id[:]) + "\n")}
	err := r.bucket.PutNew(ctx, l.key, l.data)
	if errors.Is(err, fs.ErrExist) {
		err = r.takeStaleLease(ctx, l)
	}
	if err != nil {
		return nil, err
	}
	info, err := r.bucket.Head(ctx, l.key)
	if err != nil {
		return nil, fmt.Errorf("gc: read the lease: %w; nothing was deleted", err)
	}
	l.etag, l.now = info.ETag, info.LastModified
	return l, nil
}

// takeStaleLease replaces a lease not renewed for the lease TTL.
func (r *bucketStore) takeStaleLease(ctx context.Context, l *lease) error {
	held, err := r.bucket.Head(ctx, l.key)
	if err != nil {
		return fmt.Errorf("gc: read the lease: %w; nothing was deleted", err)
	}
	now, err := r.serverNow(ctx)
	if err != nil {
		return err
	}
	if age := now.Sub(held.LastModified); age < r.leaseTTL() {
		return fmt.Errorf("%w: another gc holds %s%s (renewed %s ago by the server's clock); try again later", ErrRefused, r.url, "/"+l.key, age.Round(time.Second))
	}
	if err := r.bucket.PutIfMatch(ctx, l.key, held.ETag, l.data); err != nil {
		return fmt.Errorf("gc: take over the stale lease: %w; another gc was faster: try again later", err)
	}
	return nil
}

// serverNow returns the server's time: the Last-Modified of an object it
// puts and deletes (3 requests).
func (r *bucketStore) serverNow(ctx context.Context) (time.Time, error) {
	key := remote.GCKey("gc/clock/", time.Now())
	if err := r.bucket.PutNew(ctx, key, nil); err != nil {
		return time.Time{}, fmt.Errorf("gc: read the server's clock: %w", err)
	}
	info, err := r.bucket.Head(ctx, key)
	if derr := r.bucket.Delete(ctx, key); err == nil {
		err = derr
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("gc: read the server's clock: %w", err)
	}
	return info.LastModified, nil
}

// renew puts the lease again if it is still this gc's (If-Match): before
// each deletion or pending list. A gc that lost its lease stops.
func (l *lease) renew(ctx context.Context) error {
	if err := l.r.bucket.PutIfMatch(ctx, l.key, l.etag, l.data); err != nil {
		return fmt.Errorf("gc: renew the lease: %w; another gc took it over, so this one stops", err)
	}
	return nil
}

// release deletes the lease if it is still this gc's.
func (l *lease) release(ctx context.Context) {
	if info, err := l.r.bucket.Head(ctx, l.key); err == nil && info.ETag == l.etag {
		_ = l.r.bucket.Delete(ctx, l.key)
	}
}

// advanceHorizon removes the deleted lists older than the horizon by the
// server's clock (docs/remote.md, "Horizon"): it merges them into the
// next horizon generation, then deletes them, then the horizon
// generations older than the horizon but the newest.
func (r *bucketStore) advanceHorizon(ctx context.Context, l *lease) error {
	var old []string
	err := r.bucket.ListInfo(ctx, remote.DeletedDir, "", func(o s3store.ObjectInfo) error {
		if remote.IsGCKey(remote.DeletedDir, o.Key) && l.now.Sub(o.LastModified) > r.horizon {
			old = append(old, o.Key)
		}
		return nil
	})
	if err != nil || len(old) == 0 {
		return gcErr(err)
	}
	var gens []s3store.ObjectInfo
	var next uint64 = 1
	err = r.bucket.ListInfo(ctx, remote.HorizonDir, "", func(o s3store.ObjectInfo) error {
		if g, ok := remote.ParseHorizon(o.Key); ok {
			gens = append(gens, o)
			next = max(next, g+1)
		}
		return nil
	})
	if err != nil {
		return gcErr(err)
	}
	merged := map[[16]byte]int{}
	for _, key := range old {
		b, err := r.bucket.Get(ctx, key, remote.MaxPackList)
		if errors.Is(err, fs.ErrNotExist) {
			continue // another gc removed it, after its horizon generation named its packs
		} else if err != nil {
			return gcErr(err)
		}
		names, err := remote.DecodePackList(remote.Unsealed(key, b))
		if err != nil {
			return fmt.Errorf("gc: deleted list %s: %w; nothing more was deleted: delete that list", key, err)
		}
		for _, name := range names {
			merged[name] = 0
		}
	}
	if err := l.renew(ctx); err != nil {
		return err
	}
	err = r.bucket.PutNew(ctx, remote.HorizonKey(next), r.key.Seal(remote.HorizonKey(next), remote.EncodePackList(sortedNames(merged))))
	if errors.Is(err, fs.ErrExist) {
		return nil // another gc wrote this generation: it removes its lists
	} else if err != nil {
		return gcErr(err)
	}
	for _, key := range old {
		if err := r.bucket.Delete(ctx, key); err != nil {
			return gcErr(err)
		}
	}
	for _, o := range gens {
		if l.now.Sub(o.LastModified) > r.horizon {
			if err := r.bucket.Delete(ctx, o.Key); err != nil {
				return gcErr(err)
			}
		}
	}
	return nil
}

// gcErr is err, if any, as an error of gc that stopped.
func gcErr(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("gc: %w; nothing more was deleted", err)
}
