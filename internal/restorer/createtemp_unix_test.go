//go:build unix

package restorer

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestCreateTemp: RootFS makes a temporary file of the restore's name in
// the directory asked for, with the mode asked for less the umask, locked
// until it is closed.
func TestCreateTemp(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	umask := syscall.Umask(0o022)
	syscall.Umask(umask)
	f, name, err := RootFS(root).CreateTemp("sub", 0o777)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !tempName.MatchString(filepath.ToSlash(name)) || filepath.Dir(name) != "sub" {
		t.Fatalf("temporary file %q", name)
	}
	st, err := os.Lstat(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if want := os.FileMode(0o777 &^ umask); st.Mode().Perm() != want {
		t.Errorf("mode %v, want %v", st.Mode().Perm(), want)
	}
	// A cleaner cannot take it while it is open.
	RemoveLeftovers(dir, []string{filepath.ToSlash(name)})
	if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
		t.Fatalf("a locked temporary file was removed: %v", err)
	}
	f.Close()
	RemoveLeftovers(dir, []string{filepath.ToSlash(name)})
	if _, err := os.Lstat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an unlocked leftover stays: %v", err)
	}
}
