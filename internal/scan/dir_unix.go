//go:build unix

package scan

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/casckpt/casckpt/internal/osfs"
	"github.com/casckpt/casckpt/manifest"
)

// dir is a directory of the tree, open: its entries are stat'ed, read and
// opened relative to it (fstatat, readlinkat, openat), never through a
// link.
type dir struct{ fd int }

// root is the root directory of the tree, open: every path below it is
// opened relative to it, following no symlink in any component.
type root struct {
	dir
	res resolver // how a relative path is opened (resolver_*.go)
}

// openRoot opens the directory at path, never through a symlink, and
// returns it with its metadata.
func openRoot(path string) (root, osfs.Stat, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return root{}, osfs.Stat{}, fmt.Errorf("open %s: %w", path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return root{}, osfs.Stat{}, fmt.Errorf("stat %s: %w", path, err)
	}
	return root{dir: dir{fd}, res: newResolver(fd)}, osfs.FromUnix(&st), nil
}

// openDir opens the directory rel ("" for the root itself) beneath r.
func (r root) openDir(rel string) (dir, error) {
	if rel == "" {
		rel = "."
	}
	fd, err := r.open(rel, unix.O_RDONLY|unix.O_DIRECTORY)
	return dir{fd}, err
}

// openFile opens the file rel beneath r to read it, without blocking on a
// FIFO swapped in since the walk, as an os.File named name.
func (r root) openFile(rel, name string) (*os.File, error) {
	fd, err := r.open(rel, unix.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// open opens rel beneath r without following a symlink in any component,
// so that a directory swapped for a link to outside after the walk saw it
// can never be read through.
func (r root) open(rel string, flags int) (int, error) {
	fd, err := r.res.open(r.fd, rel, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if errors.Is(err, unix.ELOOP) {
		err = errSymlinkOnPath
	}
	return fd, err
}

// openEach opens rel beneath dirfd one component at a time (openat with
// O_NOFOLLOW), following no symlink: the resolution of every Unix, and
// Linux's before openat2 (5.6).
func openEach(dirfd int, rel string, flags int) (int, error) {
	at := dirfd
	defer func() {
		if at != dirfd {
			unix.Close(at)
		}
	}()
	for {
		d, rest, more := strings.Cut(rel, "/")
		if !more {
			return unix.Openat(at, rel, flags, 0)
		}
		fd, err := unix.Openat(at, d, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		if at != dirfd {
			unix.Close(at)
		}
		at, rel = fd, rest
	}
}

func (d dir) close() { unix.Close(d.fd) }

// list lists the directory, without . and .., sorted by name.
func (d dir) list() ([]dirEntry, error) { return readDir(d.fd) }

// lstat stats the entry name, not following a link.
func (d dir) lstat(name string) (osfs.Stat, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return osfs.Stat{}, err
	}
	return osfs.FromUnix(&st), nil
}

// readlink returns the target of the link name.
func (d dir) readlink(name string) (string, error) {
	buf := make([]byte, 256)
	for {
		n, err := unix.Readlinkat(d.fd, name, buf)
		if err != nil {
			return "", err
		}
		if n < len(buf) {
			return string(buf[:n]), nil
		}
		if len(buf) > manifest.MaxTargetLen {
			return "", errors.New("link target too long")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// openEntry opens the entry name to read it, not following a link and
// without blocking on a FIFO.
func (d dir) openEntry(name string) (*os.File, error) {
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}
