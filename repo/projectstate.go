package repo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/casckpt/casckpt/gc"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/osfs"
)

// DirIdentity returns the device and inode of directory p.
func DirIdentity(p string) (index.DirID, bool) {
	dev, ino, ok := osfs.DirID(p)
	return index.DirID{Dev: dev, Ino: ino}, ok
}

// ProjectState tells what became of project p's directory. It is Live
// while the directory is there, and an Orphan only when its deletion is
// observable: it is missing (or no longer a directory) in a parent that is
// still the directory recorded at the project's last snapshot (same device
// and inode). Anything else is Unreachable: an unmounted volume, a missing
// or replaced parent, a directory that cannot be examined (permission, I/O
// error) show nothing of a deletion.
//
// A project recorded without a parent identity (by a casckpt older than
// the rule, or only imported or rebuilt by a repair) is Unreachable too,
// never an Orphan: nothing shows that its parent is the directory it was,
// and dropping every snapshot of a project whose volume is merely
// unmounted is the loss the rule exists to prevent. Such a project is
// still dropped by the stale rule once untouched long enough, and its next
// snapshot records the identity.
//
// Another machine's project of a bucket store is Unreachable: its
// directory is not on this machine.
func ProjectState(p index.Project) gc.State {
	if m, _ := SplitWorkdir(p.Workdir); m != "" {
		return gc.Unreachable
	}
	st, err := os.Stat(p.Workdir)
	switch {
	case err == nil && st.IsDir():
		return gc.Live
	case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return gc.Unreachable
	case p.Parent.IsZero():
		return gc.Unreachable
	}
	if parent, ok := DirIdentity(filepath.Dir(p.Workdir)); ok && parent == p.Parent {
		return gc.Orphan
	}
	return gc.Unreachable
}
