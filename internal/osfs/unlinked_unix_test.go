//go:build unix

package osfs

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUnlinkedAfterRemove: a file removed while open has no name left.
func TestUnlinkedAfterRemove(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	f := create(t, p)
	defer f.Close()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if unlinked, err := Unlinked(f); err != nil || !unlinked {
		t.Fatalf("Unlinked after the remove: %v, %v", unlinked, err)
	}
}
