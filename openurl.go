package casckpt

import (
	"context"
	"strings"

	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/repo"
	"github.com/casckpt/casckpt/repo/bucket"
)

// IsBucket reports whether location names a bucket store
// ("s3://BUCKET[/PREFIX]") rather than a directory.
func IsBucket(location string) bool { return strings.HasPrefix(location, "s3://") }

// OpenURL returns the store at location: a directory, as Open does, or a
// bucket of an S3-compatible server, "s3://BUCKET[/PREFIX]" (see
// docs/bucket.md), reached as opts.S3 says. It reads no environment. A
// store in a bucket keeps its records in a cache directory under
// opts.CacheDir, which may be deleted at any time: the bucket is the
// truth. The first use of a cache probes the server's conditional
// writes, and refuses a server that ignores them.
func OpenURL(ctx context.Context, location string, opts Options) (*Store, error) {
	if !IsBucket(location) {
		return Open(location, opts)
	}
	var s *Store
	b, err := bucket.Open(ctx, bucketConfig(location, opts), openCache(&s, opts))
	if err != nil {
		return nil, err
	}
	s.attach(b)
	return s, nil
}

// openBucket is OpenURL over objects instead of the server opts.S3 names
// (tests: an in-memory bucket, see export_test.go).
func openBucket(location string, objects bucket.Objects, opts Options) (*Store, error) {
	var s *Store
	b, err := bucket.OpenOver(bucketConfig(location, opts), objects, openCache(&s, opts))
	if err != nil {
		return nil, err
	}
	s.attach(b)
	return s, nil
}

// openCache returns how a bucket backend opens its records: as the store
// in its cache directory, which it keeps in *into.
func openCache(into **Store, opts Options) bucket.OpenDB {
	return func(dir string) (*index.DB, error) {
		s, err := Open(dir, opts)
		if err != nil {
			return nil, err
		}
		*into = s
		return s.repo.DB(), nil
	}
}

// attach makes s, opened in the cache directory of bucket backend b, the
// store in the bucket.
func (s *Store) attach(b *bucket.Backend) {
	s.repo.Attach(b)
}

// bucketConfig is the configuration of the bucket backend of the store at
// location, as opts say.
func bucketConfig(location string, opts Options) bucket.Config {
	o := opts.withDefaults()
	srv := opts.S3
	return bucket.Config{
		Location: location,
		Server: bucket.Server{Endpoint: srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey,
			SessionToken: srv.SessionToken, Region: srv.Region, MaxAttempts: srv.MaxAttempts},
		CacheDir: opts.CacheDir, Transport: opts.S3Transport, Progress: opts.UploadProgress, Timeout: opts.S3Timeout,
		Grace: opts.GCGrace, Horizon: opts.GCHorizon, Machine: opts.Machine, FleetKey: opts.FleetKey,
		Logger: o.Logger, Now: o.Now, SyncEvery: opts.syncEvery,
	}
}

// Location is where the store is: its directory, or its s3:// URL.
func (s *Store) Location() string { return s.repo.Backend().Location() }

// Machine is the ID of this machine in a bucket store ("" for a store in
// a directory): Options.Machine, else the one kept in the caches'
// directory.
func (s *Store) Machine() string { return s.repo.Backend().Machine() }

// SplitWorkdir splits the name under which a bucket store's cache knows a
// project into its machine ("" for this machine's) and its path.
func SplitWorkdir(workdir string) (machine, path string) { return repo.SplitWorkdir(workdir) }

// ValidMachine reports whether m can name a machine of a bucket store:
// 1 to 64 letters, digits, dots, dashes and underscores.
func ValidMachine(m string) bool { return bucket.ValidMachine(m) }

// workdirName is how messages name the project the records know as
// workdir: its path, and another machine's as "PATH on machine M".
func workdirName(workdir string) string {
	if m, path := SplitWorkdir(workdir); m != "" {
		return path + " on machine " + m
	}
	return workdir
}

// readWorkdir is the records' name of the project at dir that the
// reading use cases read: this machine's, or Options.ReadMachine's.
func (s *Store) readWorkdir(dir string) (string, error) {
	workdir, err := knownWorkdir(dir)
	if err != nil {
		return "", err
	}
	return s.machineWorkdir(workdir), nil
}

// machineWorkdir is the records' name of Options.ReadMachine's project at
// workdir (workdir itself for this machine, and in a store no other
// machine shares).
func (s *Store) machineWorkdir(workdir string) string {
	m, mine := s.opts.ReadMachine, s.repo.Backend().Machine()
	if mine == "" || m == "" || m == mine {
		return workdir
	}
	return repo.ForeignWorkdir(m, workdir)
}

// actsOn reports whether a command may act on project workdir without
// being told its directory (the hook, Root): one the backend says is this
// machine's own (in a bucket store, never one that only a record from the
// bucket names).
func (s *Store) actsOn(tx *index.Tx, workdir string) bool { return s.repo.Backend().Owns(tx, workdir) }
