package casckpt

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/s3store"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/remote"
)

// IsRemote reports whether location names a store in a bucket
// ("s3://BUCKET[/PREFIX]") rather than a directory.
func IsRemote(location string) bool { return strings.HasPrefix(location, "s3://") }

// OpenURL returns the store at location: a directory, as Open does, or a
// bucket of an S3-compatible server, "s3://BUCKET[/PREFIX]" (see
// docs/remote.md), reached as opts.S3 says. It reads no environment. A
// store in a bucket keeps its index in a cache directory under
// opts.CacheDir, which may be deleted at any time: the bucket is the
// truth. The first use of a cache probes the server's conditional
// writes, and refuses a server that ignores them.
func OpenURL(ctx context.Context, location string, opts Options) (*Store, error) {
	if !IsRemote(location) {
		return Open(location, opts)
	}
	cfg, err := s3Config(location, opts)
	if err != nil {
		return nil, err
	}
	s, machine, err := openCache(location, cfg.Bucket, cfg.Endpoint+"\x00"+cfg.Bucket+"\x00"+cfg.Prefix, opts)
	if err != nil {
		return nil, err
	}
	_ = s.db.View(func(tx *index.Tx) error {
		cfg.Probed = tx.Remote().Probed()
		return nil
	})
	bucket, err := s3store.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s.attach(location, bucket, machine)
	return s, nil
}

// openCache opens the cache of the store at location, in bucket bucket of
// the server, under opts.CacheDir (one directory per key), and returns
// it with this machine's ID.
func openCache(location, bucket, key string, opts Options) (*Store, string, error) {
	cacheRoot := opts.CacheDir
	if cacheRoot == "" {
		var err error
		if cacheRoot, err = os.UserCacheDir(); err != nil {
			return nil, "", fmt.Errorf("store %s: no cache directory (%v): set XDG_CACHE_HOME or HOME", location, err)
		}
		cacheRoot = filepath.Join(cacheRoot, "casckpt")
	}
	machine, err := machineID(opts.Machine, cacheRoot)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256([]byte(key))
	s, err := Open(filepath.Join(cacheRoot, bucket+"-"+hex.EncodeToString(sum[:8])), opts)
	return s, machine, err
}

// attach makes s, a cache opened by openCache, the store at location in
// bucket, as machine.
func (s *Store) attach(location string, bucket objectStore, machine string) {
	grace, horizon := s.opts.GCGrace, s.opts.GCHorizon
	if grace <= 0 {
		grace = defaultGCGrace
	}
	if horizon <= 0 {
		horizon = defaultGCHorizon
	}
	s.packs = keepPacks{bucket}
	s.remote = &bucketStore{url: location, bucket: bucket, grace: grace, horizon: horizon,
		syncEvery: defaultSyncEvery, machine: machine, key: remote.NewFleetKey(s.opts.FleetKey)}
}

// objectStore is what a store in a bucket needs of the bucket: its packs,
// and the small objects beside them with conditional writes and the
// server's clock (Last-Modified). cas/s3store's Store is the real one;
// tests use an in-memory one whose clock they set.
type objectStore interface {
	cas.PackStore
	cas.SizedOpener
	cas.PackSyncer
	PutNew(ctx context.Context, rel string, data []byte) error
	PutIfMatch(ctx context.Context, rel, etag string, data []byte) error
	Get(ctx context.Context, rel string, limit int64) ([]byte, error)
	Head(ctx context.Context, rel string) (s3store.ObjectInfo, error)
	Delete(ctx context.Context, rel string) error
	ListAfter(ctx context.Context, dir, startAfter string, fn func(rel string) error) error
	ListInfo(ctx context.Context, dir, startAfter string, fn func(s3store.ObjectInfo) error) error
	ReadTail(ctx context.Context, name string, size, n int64) ([]byte, error)
	RemovePack(ctx context.Context, name string) error
}

var _ objectStore = (*s3store.Store)(nil)

// bucketStore is the bucket behind a store opened from an s3:// URL.
type bucketStore struct {
	url    string
	bucket objectStore
	grace  time.Duration // see Options.GCGrace
	// horizon is the age by the server's clock past which gc removes
	// deleted lists (docs/remote.md, "Horizon").
	horizon time.Duration
	// syncEvery is how often at most the store is brought up to date
	// (defaultSyncEvery; tests over an in-memory bucket, whose clock does
	// not pass, sync at every use).
	syncEvery time.Duration
	// machine is this machine's ID; key the fleet key (nil: none).
	machine string
	key     *remote.FleetKey

	mu     sync.Mutex
	synced time.Time // when the cache was last brought up to date
	// gcKeys are the pending and deleted lists of gc that the last sync
	// listed: a commit made long after it checks that no new one appeared.
	gcKeys map[string]bool
}

// keepPacks is the pack store of a bucket as the store uses it: it never
// deletes a pack (see errRemoteDelete); only the two-phase gc does
// (remoteGC), through the bucket itself.
type keepPacks struct{ objectStore }

// Remove refuses: see errRemoteDelete.
func (keepPacks) Remove(context.Context, string) error { return errRemoteDelete }

// SetAside refuses: see errRemoteDelete.
func (keepPacks) SetAside(context.Context, string) error { return errRemoteDelete }

// RemoveIncomplete does nothing: the bucket's writers leave nothing
// behind.
func (keepPacks) RemoveIncomplete(context.Context) (int64, error) { return 0, nil }

// errRemoteDelete refuses every deletion of packs in a bucket outside the
// two-phase gc: the local collection (its sweep, repacking) would delete
// packs other writers may be reusing. The size cap of a bucket drops
// snapshots with markers instead (remoteEnforceCap).
var errRemoteDelete = fmt.Errorf("%w: packs in an s3:// store are deleted only by gc's two phases; nothing was deleted", ErrRefused)

// refuseRemoteDelete returns errRemoteDelete for a store in a bucket.
func (s *Store) refuseRemoteDelete() error {
	if s.remote != nil {
		return errRemoteDelete
	}
	return nil
}

// Location is where the store is: its directory, or its s3:// URL.
func (s *Store) Location() string {
	if s.remote != nil {
		return s.remote.url
	}
	return s.dir
}

// publish puts the commit object of pending snapshot p in the bucket, last
// in the transaction tx that commits it: its snapshot record (when it
// makes one), the turn record it changed, and the packs tx recorded (each
// was found stored by Writer.Commit); then a dropped marker per snapshot
// the keep rule dropped. A store in a directory publishes nothing.
func (ss *session) publish(ctx context.Context, tx *index.Tx, p *pendingSnapshot, res *SnapshotResult) error {
	r := ss.s.remote
	if r == nil {
		return nil
	}
	if err := tx.Remote().SetOwn(p.workdir); err != nil {
		return err
	}
	c := remote.Commit{Machine: r.machine}
	if p.rec != nil {
		c.Records = append(c.Records, remote.Record{Kind: remote.RecordSnapshot, BackupID: p.rec.BackupID, Data: index.EncodeBackup(*p.rec, "")})
	}
	if res.TurnStarted || res.TurnEnded {
		tr, ok, err := tx.Turn(p.workdir, p.opts.Turn)
		if err != nil {
			return err
		}
		if ok {
			c.Records = append(c.Records, remote.Record{Kind: remote.RecordTurn, BackupID: tr.BackupID, Data: index.EncodeTurnBackup(tr)})
		}
	}
	for _, pi := range tx.AddedPacks() {
		c.Packs = append(c.Packs, remote.Pack{Name: pi.Name, Size: pi.Size})
	}
	if len(c.Records) > 0 {
		if err := ss.recheck(ctx); err != nil {
			return err
		}
		key := remote.CommitKey(time.Now(), c.Records[0].BackupID) // the wall clock, not opts.Now: keys order the listing
		if err := r.bucket.PutNew(ctx, key, r.key.Seal(key, remote.EncodeCommit(c))); err != nil {
			return fmt.Errorf("publish the snapshot's commit: %w", err)
		}
		if err := ss.recheck(ctx); errors.Is(err, errGCMeanwhile) && p.rec != nil {
			// Stopped between the check and the PUT: take the commit back.
			if derr := r.bucket.PutNew(ctx, r.key.SignName(remote.DroppedKey(time.Now(), p.rec.ID)), nil); derr != nil {
				return fmt.Errorf("%w; and the drop of the commit failed (%v): run casckpt verify", err, derr)
			}
			return err
		} else if err != nil {
			return err
		}
		if err := tx.Remote().SetApplied(key); err != nil {
			return err
		}
	}
	for _, id := range res.Dropped {
		if err := ss.s.markDropped(ctx, tx, id); err != nil {
			return err
		}
	}
	return nil
}

// publishWrites puts the writes that tx records in project workdir's
// ledger in the bucket, as a commit of one record, last in tx: every
// machine's cache, and a rebuilt one, applies them (nothing for a store
// in a directory). The commit names no pack and no object.
func (ss *session) publishWrites(ctx context.Context, tx *index.Tx, workdir string, writes []index.Write) error {
	r := ss.s.remote
	if r == nil {
		return nil
	}
	var id cas.ID
	if _, err := rand.Read(id[:]); err != nil {
		return err
	}
	c := remote.Commit{Machine: r.machine, Records: []remote.Record{{Kind: remote.RecordWrites, BackupID: id, Data: index.EncodeWrites(workdir, writes)}}}
	key := remote.CommitKey(time.Now(), id)
	if err := r.bucket.PutNew(ctx, key, r.key.Seal(key, remote.EncodeCommit(c))); err != nil {
		return fmt.Errorf("publish the recorded writes: %w", err)
	}
	return tx.Remote().SetApplied(key)
}

// markDropped puts the dropped marker of snapshot id, which tx deletes,
// in the bucket (nothing for a store in a directory).
func (s *Store) markDropped(ctx context.Context, tx *index.Tx, id cas.ID) error {
	if s.remote == nil {
		return nil
	}
	key := s.remote.key.SignName(remote.DroppedKey(time.Now(), id))
	if err := s.remote.bucket.PutNew(ctx, key, nil); err != nil {
		return fmt.Errorf("record the drop of %s in the bucket: %w", id.Short(), err)
	}
	if err := tx.Remote().SetApplied(key); err != nil {
		return err
	}
	return tx.Remote().SetDropped(id)
}

// markPinned puts (pinned) or deletes the pin marker of snapshot id in
// the bucket (nothing for a store in a directory).
func (s *Store) markPinned(ctx context.Context, id cas.ID, pinned bool) error {
	if s.remote == nil {
		return nil
	}
	key := remote.PinKey(id)
	var err error
	if pinned {
		if err = s.remote.bucket.PutNew(ctx, s.remote.key.SignName(key), nil); errors.Is(err, fs.ErrExist) {
			err = nil // pinned already, by this machine or another
		}
	} else if err = s.remote.bucket.Delete(ctx, key); err == nil && s.remote.key != nil {
		err = s.remote.bucket.Delete(ctx, s.remote.key.SignName(key)) // as a machine with the key put it
	}
	if err != nil {
		return fmt.Errorf("record the pin of %s in the bucket: %w", id.Short(), err)
	}
	return nil
}

// refuse is the error of an operation that a store in a bucket does not
// support yet.
func (r *bucketStore) refuse(op string) error {
	return fmt.Errorf("%w: %s is not supported yet on an s3:// store (%s); the local cache may be deleted instead", ErrRefused, op, r.url)
}

// repairCache rebuilds the cache of a store in a bucket: a new, empty
// index brought up to date from the bucket, as a deleted cache is. The old
// index is kept beside it.
func (s *Store) repairCache(ctx context.Context) (RepairResult, error) {
	var res RepairResult
	ss, err := s.begin(ctx, true, true)
	if err != nil {
		return res, err
	}
	defer ss.end()
	if res.OldDatabase, err = s.rebuildCache(ctx); err != nil {
		return res, err
	}
	err = s.db.View(func(tx *index.Tx) error {
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
	})
	return res, err
}

// rebuildCache replaces the cache's index with an empty one brought up
// to date from the bucket, and returns the name under which the old one
// is kept. The projects the old one recorded as this machine's own are
// kept (when it can be read). The caller holds the cache's exclusive lock.
func (s *Store) rebuildCache(ctx context.Context) (string, error) {
	own := s.ownProjects() // what the bucket cannot tell: kept
	old, err := s.db.Rebuild(s.opts.Now(), func(tx *index.Tx) error {
		for _, w := range own {
			if err := tx.Remote().SetOwn(w); err != nil {
				return err
			}
		}
		return tx.Remote().SetView(s.remote.view())
	})
	if err != nil {
		return old, err
	}
	return old, s.remote.sync(ctx, s, true)
}

// defaultGCGrace is the default of Options.GCGrace.
const defaultGCGrace = time.Hour

// defaultGCHorizon is the default of Options.GCHorizon.
const defaultGCHorizon = 7 * 24 * time.Hour

// s3Config returns the configuration of the bucket at location, an s3://
// URL, as opts say.
func s3Config(location string, opts Options) (s3store.Config, error) {
	cfg, err := s3store.ParseURL(location)
	if err != nil {
		return cfg, err
	}
	srv := opts.S3
	if srv.AccessKey == "" || srv.SecretKey == "" {
		return cfg, errors.New("s3 store: AWS_ACCESS_KEY_ID or AWS_SECRET_ACCESS_KEY is not set: set both to the bucket's credentials")
	}
	if cfg.Endpoint, cfg.Secure, err = s3store.ParseEndpoint(srv.Endpoint); err != nil {
		return cfg, err
	}
	cfg.AccessKey, cfg.SecretKey, cfg.SessionToken, cfg.Region = srv.AccessKey, srv.SecretKey, srv.SessionToken, srv.Region
	cfg.MaxRetries, cfg.Timeout = srv.MaxAttempts, opts.S3Timeout
	cfg.Transport, cfg.Progress = opts.S3Transport, opts.UploadProgress
	return cfg, nil
}

// dedupeAgainst is what a snapshot's writer deduplicates against: the
// objects of the cache, less those located in doomed packs (named by a
// gc's pending list, or deleted), which it stores again.
func dedupeAgainst(tx *index.Tx, objects *cas.Store) cas.Existing {
	doomed, err := doomedNumbers(tx)
	if err != nil || len(doomed) == 0 {
		return objects // an error shows at the commit's own reads
	}
	return undoomed{objects, doomed}
}

// undoomed hides the objects of doomed packs from a writer.
type undoomed struct {
	objects *cas.Store
	doomed  map[uint32]bool // pack numbers
}

// Has reports whether id is stored in a pack no gc is deleting.
func (u undoomed) Has(id cas.ID) (bool, error) {
	has, err := u.objects.Has(id)
	if err != nil || !has {
		return has, err
	}
	l, err := u.objects.Locate(id)
	if err != nil {
		return false, err
	}
	return !u.doomed[l.Pack], nil
}

// relocates says whether a writer's commit in tx points objects already
// indexed at its own packs: when the cache has doomed packs, whose
// objects the writer stored again.
func relocates(tx *index.Tx) bool { return len(tx.Remote().DoomedPacks()) > 0 }

// gcSeen is what a sync saw of gc: when it listed, and the pending and
// deleted lists it found.
type gcSeen struct {
	at   time.Time
	keys map[string]bool
}

// seen returns what the last sync saw of gc.
func (r *bucketStore) seen() gcSeen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return gcSeen{at: r.synced, keys: r.gcKeys}
}

// errGCMeanwhile is the error of a commit that a gc's first phase may
// have overtaken.
var errGCMeanwhile = errors.New("a gc listed packs for deletion while this snapshot ran for over half the gc grace period, and the snapshot may reuse them; nothing was committed: run it again")

// recheck makes sure, around the PUT of a commit, that the packs the
// commit needs are safe from gc. The writer avoided every pack in the
// pending lists its session's sync saw; a gc deletes a pack only once its
// pending list is older than the grace period, and its re-mark then sees
// every commit published before. So a commit published within half the
// grace period of the listing that saw the lists is safe. Past that, it
// lists the pack lists again (one request) and fails cleanly if a new
// pending or deleted list appeared since; else that listing is the new
// mark. The monotonic clock measures the wait, so a process stopped and
// resumed counts the time it was stopped. publish checks before its PUT
// and after it: a process stopped between the check and the PUT drops the
// commit it just made.
func (ss *session) recheck(ctx context.Context) error {
	r := ss.s.remote
	if ss.seen.at.IsZero() {
		return fmt.Errorf("publish the snapshot's commit: the session did not sync with the bucket; run it again")
	}
	if time.Since(ss.seen.at) < r.grace/2 {
		return nil
	}
	fresh, started, keys := false, time.Now(), map[string]bool{}
	err := r.bucket.ListAfter(ctx, remote.PackListsDir, "", func(key string) error {
		if isPackList(key) {
			fresh = fresh || !ss.seen.keys[key]
			keys[key] = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("publish the snapshot's commit: check gc's lists: %w", err)
	}
	if fresh {
		return errGCMeanwhile
	}
	ss.seen = gcSeen{at: started, keys: keys}
	return nil
}
