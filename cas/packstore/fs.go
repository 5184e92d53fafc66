package packstore

import (
	"io"
	"os"

	"github.com/casckpt/casckpt/cas"
)

// File is what Local needs of a pack file it writes.
type File interface {
	io.Writer
	Sync() error
	Close() error
}

// FS is the file system Local writes, renames and deletes packs through:
// OS, or in tests one that fails on demand, so that every create, write,
// sync, close, rename, removal and directory sync can be made to fail.
type FS interface {
	Create(name string) (File, error) // exclusive create, mode 0600
	Rename(oldname, newname string) error
	Remove(name string) error
	SyncDir(dir string) error
}

// OS is the real file system.
var OS FS = osFS{}

type osFS struct{}

func (osFS) Create(name string) (File, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
}
func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }
func (osFS) Remove(name string) error             { return os.Remove(name) }
func (osFS) SyncDir(dir string) error             { return cas.SyncDir(dir) }
