package casckpt

import (
	"context"
	"strings"

	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/machine"
	"github.com/casckpt/casckpt/repo"
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
// writes, and refuses a server that ignores them. A build with the tag
// casckpt_lean has no S3 client and refuses s3:// locations (see
// BucketsBuiltIn).
func OpenURL(ctx context.Context, location string, opts Options) (*Store, error) {
	if !IsBucket(location) {
		return Open(location, opts)
	}
	return openBucketURL(ctx, location, opts)
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
func ValidMachine(m string) bool { return machine.Valid(m) }

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
