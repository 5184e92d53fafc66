package scan

import "golang.org/x/sys/unix"

// fineTimes reports whether the root r is on a local file
// system that keeps nanosecond file times, whose files may be trusted
// from statcache.FineWindow after a change (statcache.FileStamp's fine).
// Network and FUSE file systems, whose times come from another machine's
// clock, and overlays, whose times are those of the layers below, are not.
func fineTimes(r root) bool {
	var st unix.Statfs_t
	if err := unix.Fstatfs(r.fd, &st); err != nil {
		return false
	}
	switch uint32(st.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.F2FS_SUPER_MAGIC, unix.BCACHEFS_SUPER_MAGIC:
		return true
	}
	return false
}
