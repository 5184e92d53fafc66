package testtree

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// SmallDisk mounts a tmpfs of the given size (as mount's size= option
// takes it: "24m") at a fresh directory, for as long as the test runs: a
// disk the full-disk tests can fill. It skips where mounting is not
// allowed (not root, or no tmpfs).
func SmallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small file system needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// Fill leaves exactly free bytes (rounded to the block size) available on
// the file system holding dir, in a file it returns: removing the file
// gives the space back.
func Fill(t *testing.T, dir string, free int64) string {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	avail := int64(st.Bavail) * st.Bsize
	name := filepath.Join(dir, "filler")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n := avail - free; n > 0 {
		if err := unix.Fallocate(int(f.Fd()), 0, 0, n); err != nil {
			t.Fatalf("fallocate %d: %v", n, err)
		}
	}
	return name
}
