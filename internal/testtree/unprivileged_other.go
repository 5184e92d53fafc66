//go:build !unix

package testtree

import "testing"

// AsUnprivileged returns true: the caller goes on with the test. Only Unix
// has a root that reads every file whatever its mode (see the Unix
// AsUnprivileged).
func AsUnprivileged(*testing.T) bool { return true }
