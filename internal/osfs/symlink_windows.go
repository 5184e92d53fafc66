package osfs

import (
	"os"
	"path/filepath"
	"sync"
)

// canSymlink is the answer of CanSymlink, found once.
var canSymlink = sync.OnceValue(func() bool {
	d, err := os.MkdirTemp("", "casckpt-link-")
	if err != nil {
		return false
	}
	defer os.RemoveAll(d)
	return os.Symlink("target", filepath.Join(d, "link")) == nil
})

// CanSymlink reports whether this user may make symbolic links: Windows
// allows it with Developer Mode or the SeCreateSymbolicLinkPrivilege
// (administrators), and CanSymlink finds out by making one in a new
// temporary directory, once.
func CanSymlink() bool { return canSymlink() }
