package scan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/cas/castest"
	"golang.org/x/sys/unix"
)

// readDirAt opens dir and lists it with readDir.
func readDirAt(t *testing.T, dir string) ([]dirEntry, error) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	return readDir(fd)
}

// TestReadDirManyEntries: a directory whose listing takes several getdents
// calls (3,000 names of 60 bytes: about 240 KiB of records against a 32
// KiB buffer) is listed whole, sorted, without . and .., with its
// subdirectories marked.
func TestReadDirManyEntries(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i := range 3000 {
		name := fmt.Sprintf("%04d-%s", i, strings.Repeat("n", 55))
		if i%500 == 0 {
			if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	entries, err := readDirAt(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, e := range entries {
		got = append(got, e.name)
		if e.dir != (i%500 == 0) {
			t.Errorf("%s: dir %v, want %v", e.name, e.dir, i%500 == 0)
		}
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("listed %d names, want %d (first %q)", len(got), len(want), got[:min(3, len(got))])
	}
}

// TestReadDirEmpty: an empty directory lists nothing (not . nor ..).
func TestReadDirEmpty(t *testing.T) {
	entries, err := readDirAt(t, t.TempDir())
	if err != nil || len(entries) != 0 {
		t.Fatalf("readDir of an empty directory: %v, %v", entries, err)
	}
}

// TestRootReplacedBetweenListAndStore: a Listing is stored only from the
// directory it listed; one put in the root's place meanwhile fails Store
// with a one-line error that says to run it again, and nothing of the
// new directory is read.
func TestRootReplacedBetweenListAndStore(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "p")
	for _, d := range []string{root, root + ".other"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "f"), []byte("bytes of "+d), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := List(context.Background(), root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(root, root+".listed"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(root+".other", root); err != nil {
		t.Fatal(err)
	}
	m := castest.NewMemory()
	_, err = l.Store(m, nil, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "run it again") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("store of a listing whose root was replaced: %v, want a one-line error saying to run it again", err)
	}
	if m.Len() != 0 {
		t.Fatalf("%d objects stored from the replacing directory, want 0", m.Len())
	}
}
