package restorer

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/casckpt/casckpt/internal/osfs"
	"github.com/casckpt/casckpt/manifest"
)

// FS is what Apply does to a directory tree. Names are relative to its
// root, with the system's separator. RootFS is the real one; tests wrap it,
// or fake it, to watch or fail any step. Its methods are called from
// several goroutines at once.
type FS interface {
	// CreateTemp creates a new file in directory dir with a fresh name
	// matching manifest.TempPattern and mode perm less the umask, locked
	// (osfs.Lock) until it is closed, and returns it with its name (dir
	// joined with the base name). The caller closes it.
	CreateTemp(dir string, perm fs.FileMode) (File, string, error)
	// Open opens an existing directory (to sync it) or file, read-only,
	// never waiting (a FIFO swapped in opens at once). The caller closes
	// it. A missing one is an error wrapping fs.ErrNotExist.
	Open(name string) (File, error)
	// Remove deletes a file, a link (never what it points to) or an empty
	// directory. A missing one is an error wrapping fs.ErrNotExist, a
	// directory that is not empty one that osfs.IsNotEmpty reports.
	Remove(name string) error
	// Mkdir creates a directory with mode perm less the umask; an existing
	// one is an error wrapping fs.ErrExist.
	Mkdir(name string, perm fs.FileMode) error
	// Symlink creates newname as a symbolic link to oldname; an existing
	// newname is an error wrapping fs.ErrExist.
	Symlink(oldname, newname string) error
	// Rename renames oldname to newname, replacing a file or link at
	// newname atomically.
	Rename(oldname, newname string) error
	// Lstat describes name, never following a link; Readlink returns the
	// target of the link name. A missing one is an error wrapping
	// fs.ErrNotExist.
	Lstat(name string) (fs.FileInfo, error)
	Readlink(name string) (string, error)
}

// File is what Apply does to an open file or directory.
type File interface {
	io.Writer
	Sync() error
	Close() error
}

// RootFS is the FS of r: through an os.Root, no link in the tree can lead
// an operation outside it. Closing r is the caller's, after Apply.
func RootFS(r *os.Root) FS { return osRoot{r} }

// osRoot is the FS RootFS returns.
type osRoot struct{ *os.Root }

var _ FS = osRoot{}

func (r osRoot) CreateTemp(dir string, perm fs.FileMode) (File, string, error) {
	for {
		name := filepath.Join(dir, manifest.TempName())
		f, err := r.Root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		// A cleaner removes only a leftover it can lock. One that removed
		// this file before it was locked left it unlinked: take another.
		if err := osfs.Lock(f, true); err != nil {
			f.Close()
			return nil, "", err
		}
		if gone, err := osfs.Unlinked(f); err != nil || gone {
			f.Close()
			if err != nil {
				return nil, "", err
			}
			continue
		}
		return f, name, nil
	}
}

func (r osRoot) Open(name string) (File, error) {
	f, err := r.Root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	return rootFile{f}, nil
}

// rootFile is a file or directory osRoot opened: a directory's Sync is
// osfs.SyncDir's (none on Windows).
type rootFile struct{ *os.File }

func (f rootFile) Sync() error {
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return osfs.SyncDir(f.File)
	}
	return f.File.Sync()
}

// RemoveLeftovers deletes the temporary files (slash-separated paths
// relative to dir) that killed restores left, never following a link; one
// a live restore holds locked is left alone. They are never captured, so
// nothing is lost: failures are ignored.
func RemoveLeftovers(dir string, leftovers []string) {
	if len(leftovers) == 0 {
		return
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return
	}
	defer root.Close()
	for _, p := range leftovers {
		removeLeftover(root, filepath.FromSlash(p))
	}
}

// removeLeftover removes the regular file at p if no process holds it
// locked.
func removeLeftover(root *os.Root, p string) {
	st, err := root.Lstat(p)
	if err != nil || !st.Mode().IsRegular() {
		return
	}
	f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if fst, err := f.Stat(); err != nil || !os.SameFile(st, fst) {
		return // replaced meanwhile, or a link
	}
	if ok, err := osfs.TryLock(f, true); err != nil || !ok {
		return // a live restore is writing it
	}
	_ = root.Remove(p)
}
