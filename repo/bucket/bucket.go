// Package bucket is the backend of a store kept in a bucket of an
// S3-compatible server (docs/bucket.md): a cache directory holds the
// records (index), which are a cache of the journal in the bucket
// (commit objects, dropped markers, pins); writers publish to it under
// conditional writes, a sync applies it, and gc deletes packs in two
// phases a grace period apart by the server's clock, under a lease.
package bucket

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/s3store"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/remote"
	"github.com/casckpt/casckpt/repo"
)

// Config configures the backend of one store in a bucket.
type Config struct {
	// Location is the store's URL, "s3://BUCKET[/PREFIX]".
	Location string
	// Server names the server and its credentials.
	Server Server
	// CacheDir holds the caches of the records (default the casckpt
	// directory of os.UserCacheDir) and the machine ID.
	CacheDir string
	// Transport carries the requests (default minio-go's); Progress, if
	// set, is told the bytes of packs sent; Timeout caps the wait on a
	// silent server (default s3store's).
	Transport http.RoundTripper
	Progress  func(bytes int64)
	Timeout   time.Duration
	// Grace and Horizon are gc's grace period and horizon by the
	// server's clock (defaults 1 hour and 7 days).
	Grace, Horizon time.Duration
	// Machine is this machine's ID ("": the one kept in CacheDir);
	// FleetKey the fleet's secret ("": none).
	Machine  string
	FleetKey string
	// Logger receives debug messages; Now is the records' clock.
	Logger *slog.Logger
	Now    func() time.Time
	// SyncEvery is how long after a sync the cache counts as up to date
	// (Backend.Refresh without force syncs no sooner): 0 is a second for
	// Open, and every use for OpenOver.
	SyncEvery time.Duration
}

// Server names the S3-compatible server and the credentials that sign
// its requests.
type Server struct {
	Endpoint                           string
	AccessKey, SecretKey, SessionToken string
	Region                             string
	MaxAttempts                        int
}

// OpenDB opens the records' database in a cache directory (the caller's
// store there).
type OpenDB func(dir string) (*index.DB, error)

// Open returns the backend of the store at cfg.Location over the server
// cfg.Server names, its records opened by openDB in its cache directory.
// It reads no environment. The first use of a cache probes the server's
// conditional writes, and refuses a server that ignores them.
func Open(ctx context.Context, cfg Config, openDB OpenDB) (*Backend, error) {
	s3cfg, err := s3Config(cfg)
	if err != nil {
		return nil, err
	}
	b, err := newBackend(cfg, s3cfg.Bucket, s3cfg.Endpoint+"\x00"+s3cfg.Bucket+"\x00"+s3cfg.Prefix, openDB)
	if err != nil {
		return nil, err
	}
	_ = b.db.View(func(tx *index.Tx) error {
		s3cfg.Probed = tx.Journal().Probed()
		return nil
	})
	if b.objects, err = s3store.New(ctx, s3cfg); err != nil {
		return nil, err
	}
	return b, nil
}

// OpenOver is Open over objects instead of a server: in tests an
// in-memory bucket whose server clock the test sets. It syncs at every
// use, as if each use were a command of its own, unless cfg.SyncEvery
// says otherwise.
func OpenOver(cfg Config, objects Objects, openDB OpenDB) (*Backend, error) {
	b, err := newBackend(cfg, "membucket", "membucket\x00"+cfg.Location, openDB)
	if err != nil {
		return nil, err
	}
	b.objects, b.syncEvery = objects, cfg.SyncEvery
	return b, nil
}

// newBackend opens the cache of the store at cfg.Location, in bucket
// bucket of the server, under cfg.CacheDir (one directory per key).
func newBackend(cfg Config, bucket, key string, openDB OpenDB) (*Backend, error) {
	cacheRoot := cfg.CacheDir
	if cacheRoot == "" {
		var err error
		if cacheRoot, err = os.UserCacheDir(); err != nil {
			return nil, fmt.Errorf("store %s: no cache directory (%v): set XDG_CACHE_HOME or HOME", cfg.Location, err)
		}
		cacheRoot = filepath.Join(cacheRoot, "casckpt")
	}
	machine, err := machineID(cfg.Machine, cacheRoot)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(key))
	dir := filepath.Join(cacheRoot, bucket+"-"+hex.EncodeToString(sum[:8]))
	db, err := openDB(dir)
	if err != nil {
		return nil, err
	}
	if cfg.Grace <= 0 {
		cfg.Grace = defaultGCGrace
	}
	if cfg.Horizon <= 0 {
		cfg.Horizon = defaultGCHorizon
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SyncEvery <= 0 {
		cfg.SyncEvery = defaultSyncEvery
	}
	return &Backend{url: cfg.Location, dir: dir, db: db, logger: cfg.Logger, now: cfg.Now,
		grace: cfg.Grace, horizon: cfg.Horizon, syncEvery: cfg.SyncEvery,
		machine: machine, key: remote.NewFleetKey(cfg.FleetKey)}, nil
}

// Objects is what a store in a bucket needs of the bucket: its packs,
// and the small objects beside them with conditional writes and the
// server's clock (Last-Modified). cas/s3store's Store is the real one;
// tests use an in-memory one whose clock they set.
type Objects interface {
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

var _ Objects = (*s3store.Store)(nil)

// Backend is the bucket behind a store opened from an s3:// URL, and the
// cache of its records.
type Backend struct {
	url     string
	objects Objects
	// dir is the cache directory, db the records in it.
	dir    string
	db     *index.DB
	logger *slog.Logger
	now    func() time.Time
	grace  time.Duration // see Config.Grace
	// horizon is the age by the server's clock past which gc removes
	// deleted lists (docs/bucket.md, "Horizon").
	horizon time.Duration
	// syncEvery is how often at most the store is brought up to date
	// unless forced (Config.SyncEvery: defaultSyncEvery; tests over an
	// in-memory bucket, whose clock does not pass, sync at every use).
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

var _ repo.Backend = (*Backend)(nil)

// Features: no immediate deletion (gc deletes in two phases, a grace
// period apart), orphans not observable (a project's directory is on the
// machine that snapshots it), a journal in the bucket.
func (b *Backend) Features() repo.Features {
	return repo.Features{Grace: b.grace, Journaled: true}
}

// Location is the store's s3:// URL.
func (b *Backend) Location() string { return b.url }

// Machine is this machine's ID.
func (b *Backend) Machine() string { return b.machine }

// Packs is the bucket's packs as the store uses them: it never deletes
// one (see errNoDelete).
func (b *Backend) Packs() cas.PackStore { return keepPacks{b.objects} }

// Owns reports whether this machine snapshotted project workdir itself:
// one that only a record from the bucket names is another's.
func (b *Backend) Owns(tx *index.Tx, workdir string) bool { return tx.Journal().Own(workdir) }

// Refuse is the error of an operation that a store in a bucket does not
// support yet: import and clear.
func (b *Backend) Refuse(op string) error {
	return fmt.Errorf("%w: %s is not supported yet on an s3:// store (%s); the local cache may be deleted instead", repo.ErrRefused, op, b.url)
}

// keepPacks is the pack store of a bucket as the store uses it: it never
// deletes a pack (see errNoDelete); only the two-phase gc does
// (Reclaim), through the bucket itself.
type keepPacks struct{ Objects }

// Remove refuses: see errNoDelete.
func (keepPacks) Remove(context.Context, string) error { return errNoDelete }

// SetAside refuses: see errNoDelete.
func (keepPacks) SetAside(context.Context, string) error { return errNoDelete }

// RemoveIncomplete does nothing: the bucket's writers leave nothing
// behind.
func (keepPacks) RemoveIncomplete(context.Context) (int64, error) { return 0, nil }

// errNoDelete refuses every deletion of packs in a bucket outside the
// two-phase gc: the local collection (its sweep, repacking) would delete
// packs other writers may be reusing. The size cap of a bucket drops
// snapshots with markers instead.
var errNoDelete = fmt.Errorf("%w: packs in an s3:// store are deleted only by gc's two phases; nothing was deleted", repo.ErrRefused)

// defaultGCGrace is the default of Config.Grace.
const defaultGCGrace = time.Hour

// defaultGCHorizon is the default of Config.Horizon.
const defaultGCHorizon = 7 * 24 * time.Hour

// s3Config returns the configuration of the bucket at cfg.Location.
func s3Config(c Config) (s3store.Config, error) {
	cfg, err := s3store.ParseURL(c.Location)
	if err != nil {
		return cfg, err
	}
	srv := c.Server
	if srv.AccessKey == "" || srv.SecretKey == "" {
		return cfg, errors.New("s3 store: AWS_ACCESS_KEY_ID or AWS_SECRET_ACCESS_KEY is not set: set both to the bucket's credentials")
	}
	if cfg.Endpoint, cfg.Secure, err = s3store.ParseEndpoint(srv.Endpoint); err != nil {
		return cfg, err
	}
	cfg.AccessKey, cfg.SecretKey, cfg.SessionToken, cfg.Region = srv.AccessKey, srv.SecretKey, srv.SessionToken, srv.Region
	cfg.MaxRetries, cfg.Timeout = srv.MaxAttempts, c.Timeout
	cfg.Transport, cfg.Progress = c.Transport, c.Progress
	return cfg, nil
}
