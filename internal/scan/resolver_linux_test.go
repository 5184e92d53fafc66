package scan

import "testing"

// bothResolvers runs f with openat2 and with the per-component fallback.
func bothResolvers(t *testing.T, f func(t *testing.T)) {
	t.Run("openat2", f)
	t.Run("openat-per-component", func(t *testing.T) {
		useOpenat2 = false
		t.Cleanup(func() { useOpenat2 = true })
		f(t)
	})
}
