//go:build !linux

package scan

import "testing"

// bothResolvers runs f with the only resolution this system has (openat
// per component on macOS and the BSDs, os.Root on Windows).
func bothResolvers(t *testing.T, f func(t *testing.T)) {
	f(t)
}
