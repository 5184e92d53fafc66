package osfs

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLockExcludesOtherOpenFilesUntilClosed: an exclusive lock keeps
// every other open file of the lock file from taking one, shared or
// exclusive, until the file that holds it is closed (as a dead process's
// files are).
func TestLockExcludesOtherOpenFilesUntilClosed(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	holder := create(t, p)
	if err := Lock(holder, true); err != nil {
		t.Fatal(err)
	}
	other := open(t, p)
	defer other.Close()
	for _, exclusive := range []bool{false, true} {
		if ok, err := TryLock(other, exclusive); err != nil || ok {
			t.Fatalf("TryLock(exclusive %v) while another file holds the lock: %v, %v", exclusive, ok, err)
		}
	}
	holder.Close()
	if ok, err := TryLock(other, true); err != nil || !ok {
		t.Fatalf("TryLock after the holder closed: %v, %v", ok, err)
	}
}

// TestSharedLocksShare: shared locks of two open files coexist and keep
// out an exclusive one.
func TestSharedLocksShare(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	a, b, c := create(t, p), open(t, p), open(t, p)
	defer a.Close()
	defer b.Close()
	defer c.Close()
	if err := Lock(a, false); err != nil {
		t.Fatal(err)
	}
	if ok, err := TryLock(b, false); err != nil || !ok {
		t.Fatalf("a second shared lock: %v, %v", ok, err)
	}
	if ok, err := TryLock(c, true); err != nil || ok {
		t.Fatalf("an exclusive lock beside shared ones: %v, %v", ok, err)
	}
}

// TestStatOfAPathAndOfItsOpenFileAgree: the stat of a path (FromInfo of
// an Lstat) and of the file open (FileStat) give the fields that stamps
// are made of alike, so that a stamp made from either matches.
func TestStatOfAPathAndOfItsOpenFileAgree(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	byPath, ok := FromInfo(fi)
	if !ok {
		t.Fatal("FromInfo of an Lstat holds nothing")
	}
	f := open(t, p)
	defer f.Close()
	byFile, err := FileStat(f)
	if err != nil {
		t.Fatal(err)
	}
	if byPath.Mode != byFile.Mode || byPath.Size != 5 || byFile.Size != 5 || byPath.Mtime != byFile.Mtime ||
		byPath.Ctime != byFile.Ctime || byPath.Ino != byFile.Ino || byPath.Type() != TypeRegular {
		t.Fatalf("by path %+v, by file %+v", byPath, byFile)
	}
	if unlinked, err := Unlinked(f); err != nil || unlinked {
		t.Fatalf("Unlinked of a file with its name: %v, %v", unlinked, err)
	}
}

// TestDirIDTellsDirectoriesApart: DirID is the same for one directory
// reached twice and differs between two.
func TestDirIDTellsDirectoriesApart(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	devA, inoA, okA := DirID(a)
	devA2, inoA2, okA2 := DirID(filepath.Join(a, "."))
	devB, inoB, okB := DirID(b)
	if !okA || !okA2 || !okB || devA != devA2 || inoA != inoA2 || (devA == devB && inoA == inoB) {
		t.Fatalf("DirID: a %d/%d %v, a again %d/%d %v, b %d/%d %v", devA, inoA, okA, devA2, inoA2, okA2, devB, inoB, okB)
	}
	if _, _, ok := DirID(filepath.Join(a, "missing")); ok {
		t.Fatal("DirID of a missing directory is ok")
	}
}

// TestIsNotEmpty: removing a directory that holds a file fails with an
// error IsNotEmpty knows; other failures are not it.
func TestIsNotEmpty(t *testing.T) {
	d := t.TempDir()
	if err := os.WriteFile(filepath.Join(d, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(d); !IsNotEmpty(err) {
		t.Fatalf("remove of a full directory: %v", err)
	}
	if err := os.Remove(filepath.Join(d, "missing")); IsNotEmpty(err) {
		t.Fatalf("remove of a missing file: %v is 'not empty'", err)
	}
}

func create(t *testing.T, p string) *os.File {
	t.Helper()
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func open(t *testing.T, p string) *os.File {
	t.Helper()
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
