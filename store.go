package casckpt

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/restorer"
	"github.com/casckpt/casckpt/manifest"
	"github.com/casckpt/casckpt/repo"
)

// Options configure a Store. The zero value means the defaults.
type Options struct {
	// LockTimeout bounds the wait for other processes (default 2 minutes).
	LockTimeout time.Duration
	// Now is the clock for every time the store records or compares
	// (snapshot times, last touch, retention). Default time.Now.
	Now func() time.Time
	// Logger receives debug messages; nil is silent.
	Logger *slog.Logger
	// HomeDir is the user's home directory, which Snapshot refuses to
	// capture whole (default os.UserHomeDir).
	HomeDir string
	// For OpenURL of an s3:// store: S3 names the server and its
	// credentials, CacheDir holds the caches of the index (default the
	// casckpt directory of os.UserCacheDir), and S3Transport carries the
	// requests (default minio-go's).
	S3          S3Server
	CacheDir    string
	S3Transport http.RoundTripper
	// UploadProgress, if set, is called on an s3:// store with the number
	// of bytes of packs sent to the bucket since its former call, from
	// the goroutines that send them (a few packs go at once).
	UploadProgress func(bytes int64)
	// GCGrace is, on an s3:// store, how long by the server's clock a pack
	// that gc found unneeded stays listed as pending before a later gc
	// may delete it (default 1 hour; the command takes $CASCKPT_GC_GRACE).
	// Every snapshot must finish well within half of it, or it re-checks
	// before it commits.
	GCGrace time.Duration
	// GCHorizon is, on an s3:// store, the age by the server's clock past
	// which gc removes deleted lists (docs/bucket.md, "Horizon"; default
	// 7 days; the command takes $CASCKPT_GC_HORIZON).
	GCHorizon time.Duration
	// Machine is, on an s3:// store, this machine's ID (1 to 64 letters,
	// digits, dots, dashes and underscores): its projects are its own
	// (docs/bucket.md, "Machines"). Default: the ID kept in CacheDir,
	// made there the first time.
	Machine string
	// ReadMachine is, on an s3:// store, the machine whose project at the
	// given directory the reading use cases (List, Diff, FileLog, Turns,
	// Cat and the other reads of a snapshot) read, and whose snapshot
	// Restore restores into the directory; "" is this machine.
	ReadMachine string
	// FleetKey is, on an s3:// store, the fleet's secret: every object
	// this store puts carries a keyed BLAKE3 MAC derived from it, and
	// objects without a valid one are ignored (VerifyResult.Rejected
	// names them). It is never stored, in the bucket or the cache.
	FleetKey string
	// S3Timeout, if set, caps how long an operation on an s3:// store
	// waits on a silent server (default 20 seconds; the command takes
	// $CASCKPT_S3_TIMEOUT, and the hook the shorter of it and one second).
	S3Timeout time.Duration
	// FilePacksOnly makes every snapshot of a store in a directory write
	// its packs as pack files, none inline in the database (package cas,
	// "Inline packs"): each turn then pays the pack file's fsyncs too, and
	// a database lost outright can be rebuilt from the pack files with
	// every snapshot (the command takes $CASCKPT_FILE_PACKS=1).
	FilePacksOnly bool

	// syncEvery is, on an s3:// store, how long after a sync the cache
	// counts as up to date (bucket.Config.SyncEvery); only tests set it
	// (export_test.go), as a long-lived process's.
	syncEvery time.Duration
}

// S3Server names the S3-compatible server of an s3:// store and the
// credentials that sign its requests. The library reads no environment:
// the command fills it from AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION and
// AWS_MAX_ATTEMPTS (docs/commands.md).
type S3Server struct {
	// Endpoint is the server's URL, "http://HOST:PORT" or "https://HOST";
	// "" is https://s3.amazonaws.com.
	Endpoint string
	// AccessKey and SecretKey (both required) and SessionToken (may be
	// empty) sign the requests.
	AccessKey, SecretKey, SessionToken string
	// Region of the bucket; "" asks the server once.
	Region string
	// MaxAttempts is how often a failed request is tried in all; 0 is
	// minio-go's default (10), 1 no retry.
	MaxAttempts int
}

func (o Options) withDefaults() Options {
	if o.LockTimeout <= 0 {
		o.LockTimeout = 2 * time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.HomeDir == "" {
		o.HomeDir, _ = os.UserHomeDir()
	}
	return o
}

// Store is a checkpoint store in one directory. It is safe for concurrent
// use by goroutines and processes; it holds no open files between calls.
type Store struct {
	dir  string
	opts Options
	// repo is the store's records, objects, lock and backend: a
	// repo.Local for a store in a directory, a bucket.Backend for one
	// opened from an s3:// URL (see OpenURL).
	repo *repo.Repo
	// projectFS wraps a project directory for a restore's writes: the
	// real ones, or in tests ones that fail on demand.
	projectFS func(*os.Root) restorer.FS
}

// record is a snapshot record as the index keeps it; hosts see Snapshot.
type record = index.Snapshot

// Snapshot is what a host sees of a snapshot.
type Snapshot struct {
	ID      cas.ID
	Project string // the project's workdir
	// Serial is the snapshot's stable number in its project, #Serial: 1
	// for the project's first snapshot, one more for each later one, never
	// given again once its snapshot is dropped.
	Serial uint64
	Time   time.Time
	Reason string
	Pinned bool
	Files  int64 // files and links captured
	Bytes  int64 // their total size
	// MaxFileSize is the size limit it was taken with (0: unknown): larger
	// files were left out, and a restore of it leaves them alone.
	MaxFileSize int64
	// Exclude and MaxDirFiles are the exclusions it was taken with beyond
	// the defaults (SnapshotOptions.Exclude, MaxDirFiles), applied again
	// by a restore of it.
	Exclude     []string
	MaxDirFiles int
	// Session and Turn are the host's labels ("" when it gave none).
	Session string
	Turn    string
	// AddedBytes is what the snapshot added to the store when it was
	// taken: the size of the packs it wrote, compressed, which hold only
	// the objects that no older snapshot of any project had (its new
	// files and trees, and its record's backup); AddedRawBytes is their
	// plain size. Both are recorded when the snapshot is taken, and 0 when
	// unknown: snapshots taken before casckpt recorded them, imported ones,
	// and those a repair rebuilt from the packs alone.
	AddedBytes    int64
	AddedRawBytes int64
}

// hostSnapshot returns what a host sees of record r.
func hostSnapshot(r record) Snapshot {
	return Snapshot{ID: r.ID, Project: r.Project, Serial: r.Seq, Time: r.Time, Reason: r.Reason, Pinned: r.Pinned, Files: r.Stats.Files, Bytes: r.Stats.Bytes, MaxFileSize: r.MaxFileSize,
		Exclude: r.Exclude, MaxDirFiles: r.MaxDirFiles, Session: r.Session, Turn: r.Turn, AddedBytes: r.Added.Bytes, AddedRawBytes: r.Added.Raw}
}

// Open returns the store in dir. It creates nothing: the directory is made,
// with mode 0700, by the first operation that writes.
func Open(dir string, opts Options) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", dir, err)
	}
	s := &Store{dir: abs, opts: opts.withDefaults(), projectFS: restorer.RootFS}
	s.repo = repo.Open(abs, repo.Options{LockTimeout: s.opts.LockTimeout, Chunker: manifest.ChunkerName, Now: s.opts.Now, Logger: s.opts.Logger})
	return s, nil
}

// skipDirs lists what a scan must never capture: the store itself, should
// it lie inside a project.
func (s *Store) skipDirs() []string {
	if real, err := filepath.EvalSymlinks(s.dir); err == nil && real != s.dir {
		return []string{s.dir, real}
	}
	return []string{s.dir}
}

// hold is one operation's hold on the store (repo.Hold), with the store
// whose use cases run under it.
type hold struct {
	*repo.Hold
	s *Store
}

// view is a read transaction of the store: its records and its objects.
type view = repo.View

// begin takes the store lock, exclusive or shared, making the store
// first with create (repo.Repo.Begin).
func (s *Store) begin(ctx context.Context, exclusive, create bool) (*hold, error) {
	return s.beginWith(ctx, repo.BeginOptions{Exclusive: exclusive, Create: create})
}

// beginWith is begin, as o says.
func (s *Store) beginWith(ctx context.Context, o repo.BeginOptions) (*hold, error) {
	h, err := s.repo.Begin(ctx, o)
	if err != nil {
		return nil, err
	}
	return &hold{Hold: h, s: s}, nil
}

// read runs fn with a read view of the store under the shared lock. A
// snapshot it found damaged by a missing pack is checked again
// (hold.recheckMissing).
func (s *Store) read(ctx context.Context, fn func(v view) error) error {
	return s.readWith(ctx, repo.BeginOptions{}, fn)
}

// readWith is read, its hold begun as o says (shared).
func (s *Store) readWith(ctx context.Context, o repo.BeginOptions, fn func(v view) error) error {
	ss, err := s.beginWith(ctx, o)
	if err != nil {
		return err
	}
	defer ss.End()
	return ss.recheckMissing(ctx, ss.Read(fn))
}
