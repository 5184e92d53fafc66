package gitimport

import (
	"os"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// readOnlyFS is a billy filesystem that can only read. It tells go-git it
// cannot open files for writing, so packed-refs is opened O_RDONLY (go-git
// otherwise opens it O_RDWR, which fails on a read-only source and
// needlessly asks for write access on any other).
type readOnlyFS struct {
	billy.Filesystem
}

var (
	_ billy.Filesystem = readOnlyFS{}
	_ billy.Capable    = readOnlyFS{}
)

// Capabilities reports reading and seeking only.
func (readOnlyFS) Capabilities() billy.Capability {
	return billy.ReadCapability | billy.SeekCapability
}

func refuse(op, name string) error {
	return &os.PathError{Op: op, Path: name, Err: errReadOnly}
}

// Create refuses.
func (readOnlyFS) Create(name string) (billy.File, error) { return nil, refuse("create", name) }

// Open opens a file for reading.
func (f readOnlyFS) Open(name string) (billy.File, error) {
	return f.OpenFile(name, os.O_RDONLY, 0)
}

// OpenFile opens a file for reading; any flag that could change the file
// system is refused.
func (f readOnlyFS) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND|os.O_EXCL) != 0 {
		return nil, refuse("open", name)
	}
	file, err := f.Filesystem.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	return readOnlyFile{file}, nil
}

// Rename refuses.
func (readOnlyFS) Rename(from, _ string) error { return refuse("rename", from) }

// Remove refuses.
func (readOnlyFS) Remove(name string) error { return refuse("remove", name) }

// TempFile refuses.
func (readOnlyFS) TempFile(dir, _ string) (billy.File, error) { return nil, refuse("create", dir) }

// MkdirAll refuses.
func (readOnlyFS) MkdirAll(name string, _ os.FileMode) error { return refuse("mkdir", name) }

// Symlink refuses.
func (readOnlyFS) Symlink(_, link string) error { return refuse("symlink", link) }

// Chroot returns the subtree at p, read-only too.
func (f readOnlyFS) Chroot(p string) (billy.Filesystem, error) {
	sub, err := f.Filesystem.Chroot(p)
	if err != nil {
		return nil, err
	}
	return readOnlyFS{sub}, nil
}

// readOnlyFile is a file opened for reading. Locking is a no-op: git
// replaces the files go-git locks (packed-refs) by renaming a new one over
// them, so an open file never changes under a reader, and flock can fail on
// read-only or network file systems.
type readOnlyFile struct {
	billy.File
}

// Lock does nothing.
func (readOnlyFile) Lock() error { return nil }

// Unlock does nothing.
func (readOnlyFile) Unlock() error { return nil }

// Write refuses.
func (f readOnlyFile) Write([]byte) (int, error) { return 0, refuse("write", f.Name()) }

// Truncate refuses.
func (f readOnlyFile) Truncate(int64) error { return refuse("truncate", f.Name()) }

// Storage tuning: the object cache bounds memory per open repository;
// objects above the threshold are streamed from disk instead of being read
// into memory whole (deltified objects are always rebuilt in memory).
const (
	objectCacheSize      = 32 * cache.MiByte
	largeObjectThreshold = 1 << 20
)

// openRepo opens the git directory gitDir for reading only. The caller
// closes it. Opening reads nothing; a directory that is not a repository
// fails on first use.
func openRepo(gitDir string) *filesystem.Storage {
	return filesystem.NewStorageWithOptions(readOnlyFS{osfs.New(gitDir)}, cache.NewObjectLRU(objectCacheSize),
		filesystem.Options{
			KeepDescriptors:      true,
			LargeObjectThreshold: largeObjectThreshold,
			// Absolute paths in objects/info/alternates are followed from
			// the file system root (read-only as well).
			AlternatesFS: readOnlyFS{osfs.New(string(os.PathSeparator))},
		})
}

// closeRepo closes the pack files a storage kept open.
func closeRepo(st *filesystem.Storage) {
	_ = st.Close() // nothing was written: a close error loses nothing
}
