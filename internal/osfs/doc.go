// Package osfs holds what differs between operating systems in the file
// system calls casckpt makes, each behind one small file per system with
// the same tests: a file's metadata (Stat: device, inode, mode, times,
// links), the advisory locks that a dead process releases (flock on Unix,
// LockFileEx on Windows), and the errors whose numbers differ. Names
// (names.go) holds the pure rules of what a name may be on each system,
// which a restore applies to the paths it writes.
//
// Everything here is a leaf: the standard library and golang.org/x/sys.
package osfs
