package scan

import "golang.org/x/sys/unix"

// useOpenat2 is false in tests of the fallback for kernels without openat2.
var useOpenat2 = true

// beneath is how openat2 resolves a path: never above the root, never
// through a symlink.
const beneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS

// resolver opens a path beneath the root with one openat2
// (RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS) where the kernel has it, and with
// an openat per component (openEach) on kernels before Linux 5.6.
type resolver struct{ openat2 bool }

// newResolver tries openat2 on the root open as fd.
func newResolver(fd int) resolver {
	if !useOpenat2 {
		return resolver{}
	}
	tfd, err := unix.Openat2(fd, ".", &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC, Resolve: beneath})
	if err != nil {
		return resolver{}
	}
	unix.Close(tfd)
	return resolver{openat2: true}
}

// open opens rel beneath dirfd, following no symlink.
func (r resolver) open(dirfd int, rel string, flags int) (int, error) {
	if r.openat2 {
		return unix.Openat2(dirfd, rel, &unix.OpenHow{Flags: uint64(flags), Resolve: beneath})
	}
	return openEach(dirfd, rel, flags)
}
