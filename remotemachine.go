package casckpt

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/zeebo/blake3"

	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/remote"
)

// On a bucket store a project is a machine and a path (docs/remote.md,
// "Machines"). The cache keeps the projects of this machine under their
// path, as a store in a directory does, and those of machine M under
// foreignWorkdir(M, path): a NUL, M, a NUL and the path. No path holds a
// NUL, so no directory resolves to another machine's project, and no
// file system call can act on one.

// machineFile is the file, in the caches' directory, that keeps the
// machine's ID.
const machineFile = "machine"

// foreignWorkdir is the cache's name of machine m's project at path.
func foreignWorkdir(m, path string) string { return "\x00" + m + "\x00" + path }

// SplitWorkdir splits the name under which a bucket store's cache knows a
// project into its machine ("" for this machine's) and its path.
func SplitWorkdir(workdir string) (machine, path string) {
	rest, ok := strings.CutPrefix(workdir, "\x00")
	if !ok {
		return "", workdir
	}
	machine, path, _ = strings.Cut(rest, "\x00")
	return machine, path
}

// ValidMachine reports whether m can name a machine of a bucket store:
// 1 to 64 letters, digits, dots, dashes and underscores.
func ValidMachine(m string) bool { return remote.ValidMachine(m) }

// workdirName is how messages name the project the cache knows as
// workdir: its path, and another machine's as "PATH on machine M".
func workdirName(workdir string) string {
	if m, path := SplitWorkdir(workdir); m != "" {
		return path + " on machine " + m
	}
	return workdir
}

// Machine is the ID of this machine in a bucket store ("" for a store in
// a directory): Options.Machine, else the one kept in the caches'
// directory.
func (s *Store) Machine() string {
	if s.remote == nil {
		return ""
	}
	return s.remote.machine
}

// readWorkdir is the cache's name of the project at dir that the reading
// use cases read: this machine's, or Options.ReadMachine's.
func (s *Store) readWorkdir(dir string) (string, error) {
	workdir, err := knownWorkdir(dir)
	if err != nil {
		return "", err
	}
	return s.machineWorkdir(workdir), nil
}

// machineWorkdir is the cache's name of Options.ReadMachine's project at
// workdir (workdir itself for this machine).
func (s *Store) machineWorkdir(workdir string) string {
	m := s.opts.ReadMachine
	if s.remote == nil || m == "" || m == s.remote.machine {
		return workdir
	}
	return foreignWorkdir(m, workdir)
}

// machineID returns this machine's ID: set, else the one kept in file
// machineFile of cacheRoot, which is made the first time from the host
// name and /etc/machine-id (random when both are missing), so that a
// cache deleted and rebuilt keeps it.
func machineID(set, cacheRoot string) (string, error) {
	if set != "" {
		if !remote.ValidMachine(set) {
			return "", fmt.Errorf("%w: machine %q: a machine is 1 to 64 letters, digits, dots, dashes and underscores", ErrRefused, set)
		}
		return set, nil
	}
	name := filepath.Join(cacheRoot, machineFile)
	if b, err := os.ReadFile(name); err == nil {
		if id := strings.TrimSpace(string(b)); remote.ValidMachine(id) {
			return id, nil
		}
		return "", fmt.Errorf("%w: %s holds no machine ID: delete it (a new one is made) or set CASCKPT_MACHINE", ErrRefused, name)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read the machine ID: %w", err)
	}
	id := newMachineID()
	if err := os.MkdirAll(cacheRoot, 0o700); err != nil {
		return "", fmt.Errorf("keep the machine ID: %w", err)
	}
	f, err := os.CreateTemp(cacheRoot, machineFile+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("keep the machine ID: %w", err)
	}
	_, werr := f.WriteString(id + "\n")
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("keep the machine ID: %w", err)
	}
	// Link, not rename: of two processes that make it at once, the first
	// one's stays, and the second reads it.
	err = os.Link(f.Name(), name)
	os.Remove(f.Name())
	if errors.Is(err, fs.ErrExist) {
		return machineID("", cacheRoot)
	}
	if err != nil {
		return "", fmt.Errorf("keep the machine ID: %w", err)
	}
	return id, nil
}

// newMachineID makes a machine ID: 12 hex digits of a hash of the host
// name and /etc/machine-id, random when both are missing.
func newMachineID() string {
	host, _ := os.Hostname()
	mid, _ := os.ReadFile("/etc/machine-id")
	seed := host + "\x00" + strings.TrimSpace(string(mid))
	if seed == "\x00" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		seed = string(b[:])
	}
	sum := blake3.Sum256([]byte("casckpt machine\x00" + seed))
	return hex.EncodeToString(sum[:6])
}

// errCacheView is the error of a sync of a cache built for another
// machine ID or fleet key than the store's: it is rebuilt from the bucket.
var errCacheView = errors.New("the cache was built for another machine ID or fleet key")

// view is what the cache's records depend on beyond the bucket: the
// machine they were applied for and the fleet key that checked them.
func (r *bucketStore) view() string { return r.machine + "\x00" + r.key.Fingerprint() }

// checkView returns errCacheView when the cache in tx was built for
// another view than r's. A cache older than views (none recorded) was
// built with every record in this machine's projects and no key: it is
// kept unless a key is set now.
func (r *bucketStore) checkView(tx *index.Tx) error {
	v, ok := tx.Remote().View()
	switch {
	case ok && v != r.view():
		return errCacheView
	case !ok && r.key != nil && !tx.Remote().Watermark().IsZero():
		return errCacheView
	}
	return nil
}

// ownProjects returns the projects the cache in s recorded as its own,
// read from a database that may be damaged (nil then).
func (s *Store) ownProjects() []string {
	var own []string
	_ = s.db.View(func(tx *index.Tx) error {
		own = tx.Remote().OwnWorkdirs()
		return nil
	})
	return own
}

// actsOn reports whether a command may act on project workdir without
// being told its directory (the hook, Root): any project of a store in a
// directory; in a bucket store, only one this machine snapshotted itself,
// never one that only a record from the bucket names.
func (s *Store) actsOn(tx *index.Tx, workdir string) bool {
	return s.remote == nil || tx.Remote().Own(workdir)
}
