package bucket

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
	"github.com/casckpt/casckpt/internal/machine"
	"github.com/casckpt/casckpt/repo"
)

// machineFile is the file, in the caches' directory, that keeps the
// machine's ID.
const machineFile = "machine"

// ValidMachine reports whether m can name a machine of a bucket store:
// 1 to 64 letters, digits, dots, dashes and underscores.
func ValidMachine(m string) bool { return machine.Valid(m) }

// machineID returns this machine's ID: set, else the one kept in file
// machineFile of cacheRoot, which is made the first time from the host
// name and /etc/machine-id (random when both are missing), so that a
// cache deleted and rebuilt keeps it.
func machineID(set, cacheRoot string) (string, error) {
	if set != "" {
		if !machine.Valid(set) {
			return "", fmt.Errorf("%w: machine %q: a machine is 1 to 64 letters, digits, dots, dashes and underscores", repo.ErrRefused, set)
		}
		return set, nil
	}
	name := filepath.Join(cacheRoot, machineFile)
	if b, err := os.ReadFile(name); err == nil {
		if id := strings.TrimSpace(string(b)); machine.Valid(id) {
			return id, nil
		}
		return "", fmt.Errorf("%w: %s holds no machine ID: delete it (a new one is made) or set CASCKPT_MACHINE", repo.ErrRefused, name)
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
func (b *Backend) view() string { return b.machine + "\x00" + b.key.Fingerprint() }

// checkView returns errCacheView when the cache in tx was built for
// another view than r's. A cache older than views (none recorded) was
// built with every record in this machine's projects and no key: it is
// kept unless a key is set now.
func (b *Backend) checkView(tx *index.Tx) error {
	v, ok := tx.Journal().View()
	switch {
	case ok && v != b.view():
		return errCacheView
	case !ok && b.key != nil && !tx.Journal().Watermark().IsZero():
		return errCacheView
	}
	return nil
}

// ownProjects returns the projects the cache recorded as its own,
// read from a database that may be damaged (nil then).
func (b *Backend) ownProjects() []string {
	var own []string
	_ = b.db.View(func(tx *index.Tx) error {
		own = tx.Journal().OwnWorkdirs()
		return nil
	})
	return own
}
