package osfs

import "io/fs"

// The file type bits of Stat.Mode: Unix's S_IFMT values, the same on
// every Unix; on Windows Stat.Mode is made of them too.
const (
	TypeMask    = 0o170000
	TypeDir     = 0o040000
	TypeRegular = 0o100000
	TypeSymlink = 0o120000
)

// Stat is what casckpt reads of a file's metadata, the same on every
// system. Mode is a Unix st_mode (type bits, then permission bits); on
// Windows it is made from the attributes (TypeDir, TypeRegular or
// TypeSymlink, and 0o666, less 0o222 for a read-only file), so no file has
// an executable bit there. Ctime is the inode change time in nanoseconds
// (0 on Windows, which keeps none that a stat returns); Dev and Ino
// identify the file (0 where the call that made the Stat cannot tell:
// FromInfo on Windows); Blocks counts 512-byte blocks allocated (0 on
// Windows).
type Stat struct {
	Mode         uint32
	Size         int64
	Mtime, Ctime int64
	Dev, Ino     uint64
	Nlink        uint64
	Blocks       int64
}

// Type returns the type bits of the mode: TypeDir, TypeRegular,
// TypeSymlink or another (a device, a FIFO, a socket); 0 for a Stat that
// holds nothing.
func (s Stat) Type() uint32 { return s.Mode & TypeMask }

// Exec reports whether the owner may execute the file.
func (s Stat) Exec() bool { return s.Mode&0o100 != 0 }

// windowsMode makes a Unix st_mode of the FileMode that Windows gives a
// file: its type (a device or pipe as a FIFO, which no snapshot captures)
// and its permission bits less the executable ones, which Windows does not
// keep (Go reports 0o666 for a writable file, 0o444 for a read-only one).
func windowsMode(m fs.FileMode) uint32 {
	perm := uint32(m.Perm() &^ 0o111)
	switch {
	case m&fs.ModeSymlink != 0:
		return TypeSymlink | perm
	case m.IsDir():
		return TypeDir | perm
	case m.IsRegular():
		return TypeRegular | perm
	}
	return 0o010000 | perm
}
