//go:build unix

package testtree

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// unprivilegedEnv marks the child process AsUnprivileged starts.
const unprivilegedEnv = "CASCKPT_TEST_UNPRIVILEGED"

// nobody is the user and group id the child runs as.
const nobody = 65534

// AsUnprivileged lets a test of file permissions run where it is root (as
// CI is), since root reads every file whatever its mode. Run as root, it
// runs the calling test again in a child process as the unprivileged user
// nobody, fails the test if the child does, and returns false: the caller
// returns at once. In that child, or run unprivileged to begin with, it
// returns true: the caller goes on with the test.
//
//	if !testtree.AsUnprivileged(t) {
//		return
//	}
func AsUnprivileged(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		return true
	}
	if os.Getenv(unprivilegedEnv) != "" {
		t.Fatal("still root in the unprivileged child")
	}
	// The test binary sits in the go command's private work directory:
	// copy it where nobody can run it.
	dir, err := os.MkdirTemp("", "casckpt-unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "test")
	if err := copyExecutable(os.Args[0], bin); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), unprivilegedEnv+"=1", "HOME="+dir, "TMPDIR="+os.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the test run as nobody (uid %d) failed: %v\n%s", nobody, err, out)
	}
	if !bytes.Contains(out, []byte("--- PASS: "+t.Name())) {
		t.Fatalf("the test did not run as nobody:\n%s", out)
	}
	if testing.Verbose() {
		t.Logf("passed as nobody (uid %d):\n%s", nobody, out)
		return false
	}
	t.Logf("passed as nobody (uid %d)", nobody)
	return false
}

func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
