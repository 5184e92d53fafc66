package bucket

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
	"github.com/casckpt/casckpt/repo"
)

// Reclaim is gc on a store in a bucket, in two phases (docs/bucket.md):
// under the lease, after a full sync, it marks from every snapshot not
// dropped; it deletes the packs of every pending list older than the
// grace period by the server's clock that are still unneeded (their
// tables hold no live object), then, when no pending list is left, writes
// a new one of the packs no snapshot needs. Writers never reuse a pack in
// a pending list, so a pack deleted is one no commit can name. The
// caller holds the cache's exclusive lock.
func (b *Backend) Reclaim(ctx context.Context) (repo.Reclaimed, error) {
	var res repo.Reclaimed
	l, err := b.takeLease(ctx)
	if err != nil {
		return res, err
	}
	defer l.release(context.WithoutCancel(ctx))
	pending, err := b.listPending(ctx)
	if err != nil {
		return res, err
	}
	err = b.syncFrom(ctx, true, true) // after the lease's time: see recheck
	if errors.Is(err, errBehindHorizon) || errors.Is(err, errCacheView) {
		if _, err = b.Rebuild(ctx, false); err == nil {
			err = b.syncFrom(ctx, true, true)
		}
	}
	if err != nil {
		return res, fmt.Errorf("gc: %w; nothing was deleted", err)
	}
	m, err := b.markBucket(ctx)
	if err != nil {
		return res, err
	}
	waiting := false
	for _, p := range pending {
		if l.now.Sub(p.LastModified) <= b.grace {
			waiting = true
			continue
		}
		if err := b.deletePending(ctx, l, m, p.Key, &res); err != nil {
			return res, err
		}
	}
	if !waiting {
		if err := b.writePending(ctx, l, m); err != nil {
			return res, err
		}
	}
	if err := b.advanceHorizon(ctx, l); err != nil {
		return res, err
	}
	if err := b.syncFrom(ctx, true, false); err != nil { // the cache learns its own lists
		return res, err
	}
	return res, b.db.Update(func(tx *index.Tx) error { return tx.ClearPendingDrops() })
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
func (b *Backend) markBucket(ctx context.Context) (*bucketMark, error) {
	m := &bucketMark{livePacks: map[[16]byte]bool{}, stored: map[[16]byte]int64{}}
	err := b.db.View(func(tx *index.Tx) error {
		if key := tx.Journal().FirstUnread(); key != "" && tx.Journal().Rejected(key) {
			return fmt.Errorf("gc: commit %s in %s carries no valid fleet signature, so its packs cannot be told apart from garbage; nothing was deleted: if no machine of the fleet wrote it, delete it from the bucket and run casckpt repair (casckpt verify names every such object)", key, b.url)
		} else if key != "" {
			return fmt.Errorf("gc: commit %s in %s could not be read whole (damaged, or written by a newer casckpt), so its packs cannot be told apart from garbage; nothing was deleted: upgrade casckpt, or delete that commit", key, b.url)
		}
		projects, records, err := repo.LoadProjects(tx, nil)
		if err != nil {
			return err
		}
		objects, trees, err := repo.TreeReader(b.Packs(), tx.Objects())
		if err != nil {
			return err
		}
		defer objects.Close()
		graph, err := repo.MarkProjects(ctx, objects, trees, projects)
		if err != nil {
			return fmt.Errorf("gc: %w; nothing was deleted: run casckpt verify", err)
		}
		if err := repo.CheckLiveIndexed(graph, objects); err != nil {
			return err
		}
		backups := repo.LiveBackups(records, gc.Plan{})
		if err := repo.AddRecordBackups(tx, backups); err != nil {
			return err
		}
		m.live = func(id cas.ID) bool { return graph.Live(id) || backups[id] }
		return m.locateLive(tx)
	})
	if err != nil {
		return nil, err
	}
	err = b.objects.List(ctx, func(p cas.StoredPack) error {
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
func (b *Backend) unneeded(ctx context.Context, m *bucketMark, names [][16]byte) (map[[16]byte]int, error) {
	out := map[[16]byte]int{}
	for _, name := range names {
		size, stored := m.stored[name]
		if !stored || m.livePacks[name] {
			continue
		}
		file := cas.PackInfo{Name: name}.FileName()
		entries, err := cas.ReadTableFromTail(size, func(n int64) ([]byte, error) {
			return b.objects.ReadTail(ctx, file, size, n)
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
func (b *Backend) deletePending(ctx context.Context, l *lease, m *bucketMark, key string, res *repo.Reclaimed) error {
	data, err := b.objects.Get(ctx, key, remote.MaxPackList)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // another gc finished it
	} else if errors.Is(err, s3store.ErrTooLarge) {
		return nil // damaged, as verify says: nothing is deleted by it
	} else if err != nil {
		return fmt.Errorf("gc: %w; nothing more was deleted", err)
	}
	names, err := remote.DecodePackList(remote.Unsealed(key, data)) // re-marked: signed or not
	if err != nil {
		return fmt.Errorf("gc: pending list %s: %w; nothing more was deleted: delete that list", key, err)
	}
	dead, err := b.unneeded(ctx, m, names)
	if err != nil {
		return err
	}
	if len(dead) > 0 {
		if err := l.renew(ctx); err != nil {
			return err
		}
		gone := sortedNames(dead)
		deleted := remote.GCKey(remote.DeletedDir, time.Now())
		if err := b.objects.PutNew(ctx, deleted, b.key.Seal(deleted, remote.EncodePackList(gone))); err != nil {
			return fmt.Errorf("gc: %w; nothing more was deleted", err)
		}
		for _, name := range gone {
			if err := b.objects.RemovePack(ctx, cas.PackInfo{Name: name}.FileName()); err != nil {
				return fmt.Errorf("gc: %w; the next gc deletes the rest", err)
			}
			res.Objects += dead[name]
			res.Bytes += m.stored[name]
			delete(m.stored, name)
		}
	}
	if err := b.objects.Delete(ctx, key); err != nil {
		return fmt.Errorf("gc: %w", err)
	}
	return nil
}

// writePending writes a pending list of the packs in the bucket that no
// live snapshot needs (nothing when there are none).
func (b *Backend) writePending(ctx context.Context, l *lease, m *bucketMark) error {
	var names [][16]byte
	for name := range m.stored {
		if !m.livePacks[name] {
			names = append(names, name)
		}
	}
	dead, err := b.unneeded(ctx, m, names)
	if err != nil || len(dead) == 0 {
		return err
	}
	if err := l.renew(ctx); err != nil {
		return err
	}
	key := remote.GCKey(remote.PendingDir, time.Now())
	if err := b.objects.PutNew(ctx, key, b.key.Seal(key, remote.EncodePackList(sortedNames(dead)))); err != nil {
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
func (b *Backend) listPending(ctx context.Context) ([]s3store.ObjectInfo, error) {
	var out []s3store.ObjectInfo
	err := b.objects.ListInfo(ctx, remote.PendingDir, "", func(o s3store.ObjectInfo) error {
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
	b    *Backend
	key  string
	data []byte
	etag string
	now  time.Time
}

// LeaseKey names the lease every gc takes, remote.LeaseKey. A test gives
// each gc a key of its own (export_test.go) to run two gcs at once, which
// the two phases must keep safe without the lease.
var LeaseKey = func() string { return remote.LeaseKey }

// leaseTTL is how long by the server's clock a lease not renewed lasts:
// the grace period, at most 10 minutes. A gc that runs longer may see its
// lease taken over; the two-phase rule keeps two gcs at once safe.
func (b *Backend) leaseTTL() time.Duration { return min(b.grace, 10*time.Minute) }

// takeLease creates gc/lease (If-None-Match), or takes over one older
// than the lease TTL by the server's clock (If-Match on its ETag).
func (b *Backend) takeLease(ctx context.Context) (*lease, error) {
	var id [16]byte
	rand.Read(id[:]) // never fails (crypto/rand)
	l := &lease{b: b, key: LeaseKey(), data: []byte("casckpt gc " + hex.EncodeToString(id[:]) + "\n")}
	err := b.objects.PutNew(ctx, l.key, l.data)
	if errors.Is(err, fs.ErrExist) {
		err = b.takeStaleLease(ctx, l)
	}
	if err != nil {
		return nil, err
	}
	info, err := b.objects.Head(ctx, l.key)
	if err != nil {
		return nil, fmt.Errorf("gc: read the lease: %w; nothing was deleted", err)
	}
	l.etag, l.now = info.ETag, info.LastModified
	return l, nil
}

// takeStaleLease replaces a lease not renewed for the lease TTL.
func (b *Backend) takeStaleLease(ctx context.Context, l *lease) error {
	held, err := b.objects.Head(ctx, l.key)
	if err != nil {
		return fmt.Errorf("gc: read the lease: %w; nothing was deleted", err)
	}
	now, err := b.serverNow(ctx)
	if err != nil {
		return err
	}
	if age := now.Sub(held.LastModified); age < b.leaseTTL() {
		return fmt.Errorf("%w: another gc holds %s%s (renewed %s ago by the server's clock); try again later", repo.ErrRefused, b.url, "/"+l.key, age.Round(time.Second))
	}
	if err := b.objects.PutIfMatch(ctx, l.key, held.ETag, l.data); err != nil {
		return fmt.Errorf("gc: take over the stale lease: %w; another gc was faster: try again later", err)
	}
	return nil
}

// serverNow returns the server's time: the Last-Modified of an object it
// puts and deletes (3 requests).
func (b *Backend) serverNow(ctx context.Context) (time.Time, error) {
	key := remote.GCKey("gc/clock/", time.Now())
	if err := b.objects.PutNew(ctx, key, nil); err != nil {
		return time.Time{}, fmt.Errorf("gc: read the server's clock: %w", err)
	}
	info, err := b.objects.Head(ctx, key)
	if derr := b.objects.Delete(ctx, key); err == nil {
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
	if err := l.b.objects.PutIfMatch(ctx, l.key, l.etag, l.data); err != nil {
		return fmt.Errorf("gc: renew the lease: %w; another gc took it over, so this one stops", err)
	}
	return nil
}

// release deletes the lease if it is still this gc's.
func (l *lease) release(ctx context.Context) {
	if info, err := l.b.objects.Head(ctx, l.key); err == nil && info.ETag == l.etag {
		_ = l.b.objects.Delete(ctx, l.key)
	}
}

// advanceHorizon removes the deleted lists older than the horizon by the
// server's clock (docs/bucket.md, "Horizon"): it merges them into the
// next horizon generation, then deletes them, then the horizon
// generations older than the horizon but the newest.
func (b *Backend) advanceHorizon(ctx context.Context, l *lease) error {
	var old []string
	err := b.objects.ListInfo(ctx, remote.DeletedDir, "", func(o s3store.ObjectInfo) error {
		if remote.IsGCKey(remote.DeletedDir, o.Key) && l.now.Sub(o.LastModified) > b.horizon {
			old = append(old, o.Key)
		}
		return nil
	})
	if err != nil || len(old) == 0 {
		return gcErr(err)
	}
	var gens []s3store.ObjectInfo
	var next uint64 = 1
	err = b.objects.ListInfo(ctx, remote.HorizonDir, "", func(o s3store.ObjectInfo) error {
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
		data, err := b.objects.Get(ctx, key, remote.MaxPackList)
		if errors.Is(err, fs.ErrNotExist) {
			continue // another gc removed it, after its horizon generation named its packs
		} else if err != nil {
			return gcErr(err)
		}
		names, err := remote.DecodePackList(remote.Unsealed(key, data))
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
	err = b.objects.PutNew(ctx, remote.HorizonKey(next), b.key.Seal(remote.HorizonKey(next), remote.EncodePackList(sortedNames(merged))))
	if errors.Is(err, fs.ErrExist) {
		return nil // another gc wrote this generation: it removes its lists
	} else if err != nil {
		return gcErr(err)
	}
	for _, key := range old {
		if err := b.objects.Delete(ctx, key); err != nil {
			return gcErr(err)
		}
	}
	for _, o := range gens {
		if l.now.Sub(o.LastModified) > b.horizon {
			if err := b.objects.Delete(ctx, o.Key); err != nil {
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
