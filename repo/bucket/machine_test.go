package bucket

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/casckpt/casckpt/repo"
)

// TestMachineID: the machine ID is kept in the caches' directory, made
// once (by one of several processes at once), made again the same after
// the directory is deleted, and replaced by a valid Options.Machine.
func TestMachineID(t *testing.T) {
	root := filepath.Join(t.TempDir(), "casckpt")
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			id, err := machineID("", root)
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] || !ValidMachine(id) {
			t.Fatalf("machine IDs %v", ids)
		}
	}
	if b, err := os.ReadFile(filepath.Join(root, machineFile)); err != nil || string(b) != ids[0]+"\n" {
		t.Fatalf("kept %q, %v", b, err)
	}
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	if id, err := machineID("", root); err != nil || id != ids[0] {
		t.Fatalf("after the cache was deleted: %q %v, want %q", id, err, ids[0])
	}
	if id, err := machineID("sandbox-2", root); err != nil || id != "sandbox-2" {
		t.Fatalf("named: %q %v", id, err)
	}
	if _, err := machineID("a b", root); !errors.Is(err, repo.ErrRefused) {
		t.Fatalf("a name with a space: %v", err)
	}
	if err := os.WriteFile(filepath.Join(root, machineFile), []byte("kept-by-hand\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if id, err := machineID("", root); err != nil || id != "kept-by-hand" {
		t.Fatalf("the kept ID: %q %v", id, err)
	}
	if err := os.WriteFile(filepath.Join(root, machineFile), []byte("not/one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := machineID("", root); !errors.Is(err, repo.ErrRefused) {
		t.Fatalf("a file that holds no machine ID: %v", err)
	}
}
