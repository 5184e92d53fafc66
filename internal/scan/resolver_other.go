//go:build unix && !linux

package scan

// resolver opens a path beneath the root with an openat and O_NOFOLLOW per
// component (openEach): macOS and the BSDs have no openat2.
type resolver struct{}

func newResolver(int) resolver { return resolver{} }

// open opens rel beneath dirfd, following no symlink.
func (resolver) open(dirfd int, rel string, flags int) (int, error) {
	return openEach(dirfd, rel, flags)
}
