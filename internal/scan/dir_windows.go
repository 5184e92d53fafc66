package scan

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/casckpt/casckpt/internal/osfs"
	"github.com/casckpt/casckpt/manifest"
)

// dir is a directory of the tree, open as an os.Root: Windows has no
// openat, and Go's os.Root resolves every name beneath it on handles
// (NtCreateFile relative to the directory's handle, reparse points
// resolved by hand), never above it: a link swapped in after the walk saw
// a path can lead a read only to another path of the tree, never outside
// it.
type dir struct{ r *os.Root }

// root is the root directory of the tree, open.
type root struct{ dir }

// openRoot opens the directory at path, refusing a link or junction
// there, and returns it with its metadata (its identity from the handle).
func openRoot(path string) (root, osfs.Stat, error) {
	if fi, err := os.Lstat(path); err != nil {
		return root{}, osfs.Stat{}, fmt.Errorf("open %s: %w", path, err)
	} else if !fi.IsDir() {
		return root{}, osfs.Stat{}, fmt.Errorf("open %s: not a directory", path)
	}
	r, err := os.OpenRoot(path)
	if err != nil {
		return root{}, osfs.Stat{}, fmt.Errorf("open %s: %w", path, err)
	}
	f, err := r.Open(".")
	if err != nil {
		r.Close()
		return root{}, osfs.Stat{}, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	st, err := osfs.FileStat(f)
	if err == nil {
		st.Dev, st.Ino, err = osfs.FileID(f)
	}
	if err != nil {
		r.Close()
		return root{}, osfs.Stat{}, fmt.Errorf("stat %s: %w", path, err)
	}
	return root{dir{r}}, st, nil
}

// openDir opens the directory rel ("" for the root itself) beneath r.
func (r root) openDir(rel string) (dir, error) {
	if rel == "" {
		rel = "."
	}
	sub, err := r.r.OpenRoot(filepath.FromSlash(rel))
	return dir{sub}, err
}

// openFile opens the file rel beneath r to read it (Windows names the
// file as os.Root opened it, not name).
func (r root) openFile(rel, _ string) (*os.File, error) {
	return r.r.Open(filepath.FromSlash(rel))
}

func (d dir) close() { d.r.Close() }

// list lists the directory, sorted by name.
func (d dir) list() ([]dirEntry, error) {
	f, err := d.r.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return listFile(f)
}

// lstat stats the entry name, not following a link.
func (d dir) lstat(name string) (osfs.Stat, error) {
	fi, err := d.r.Lstat(name)
	if err != nil {
		return osfs.Stat{}, err
	}
	st, _ := osfs.FromInfo(fi)
	return st, nil
}

// readlink returns the target of the link name.
func (d dir) readlink(name string) (string, error) {
	t, err := d.r.Readlink(name)
	if err == nil && len(t) > manifest.MaxTargetLen {
		return "", errors.New("link target too long")
	}
	return t, err
}

// openEntry opens the entry name to read it; a link there is refused
// (by an lstat first: os.Root would follow one that stays in the tree).
func (d dir) openEntry(name string) (*os.File, error) {
	if fi, err := d.r.Lstat(name); err != nil {
		return nil, err
	} else if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, errSymlinkOnPath
	}
	return d.r.Open(name)
}
