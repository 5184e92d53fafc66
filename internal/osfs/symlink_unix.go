//go:build unix

package osfs

// CanSymlink reports whether this user may make symbolic links: on Unix,
// anyone who may write the directory.
func CanSymlink() bool { return true }
