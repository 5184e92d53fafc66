//go:build !linux

package scan

// fineTimes is false where the file system's type is not known: every
// file keeps statcache.RacyWindow.
func fineTimes(root) bool { return false }
