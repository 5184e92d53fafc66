package osfs

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestWindowsNameProblem: the names Windows refuses are named with a
// reason; ordinary names, and names that only look like device names,
// are not.
func TestWindowsNameProblem(t *testing.T) {
	for _, name := range []string{"CON", "con", "Nul.txt", "aux.tar.gz", "COM1", "lpt9.log", "COM¹", "PRN ", "CON .txt",
		"trailing.", "trailing ", "a:b", `a\b`, "what?", "star*", "pipe|", "quote\"", "<lt", "gt>", "tab\tname"} {
		if WindowsNameProblem(name) == "" {
			t.Errorf("%q: Windows cannot hold it, and no problem is named", name)
		}
	}
	for _, name := range []string{"main.go", "CONSOLE", "console.log", "com10", "lpt", "nul_", ".env", ".gitignore", "a b", "ünïcode", "x.y.z"} {
		if p := WindowsNameProblem(name); p != "" {
			t.Errorf("%q: %s", name, p)
		}
	}
}

// TestFoldCase: paths that differ only in case have one key; others do
// not.
func TestFoldCase(t *testing.T) {
	same := [][2]string{{"README", "readme"}, {"Docs/Main.go", "docs/main.GO"}, {"STRASSE", "strasse"}, {"ǅ", "ǆ"}, {"K", "\u212a"}}
	for _, p := range same {
		if FoldCase(p[0]) != FoldCase(p[1]) {
			t.Errorf("%q and %q have different keys", p[0], p[1])
		}
	}
	for _, p := range [][2]string{{"a", "b"}, {"docs/a", "docs-a"}, {"straße", "strasse"}} {
		if FoldCase(p[0]) == FoldCase(p[1]) {
			t.Errorf("%q and %q share a key", p[0], p[1])
		}
	}
}

// TestFoldsCase: a directory on a file system that keeps case (this
// test's temporary directory on Linux) is told apart from its name with
// the case swapped.
func TestFoldsCase(t *testing.T) {
	d := filepath.Join(t.TempDir(), "Project")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := os.Stat(filepath.Join(filepath.Dir(d), "pROJECT"))
	want := err == nil // the file system found the other case: it folds
	if got := FoldsCase(d); got != want {
		t.Fatalf("FoldsCase(%s) = %v, want %v", d, got, want)
	}
}

// TestWindowsModeRecordsNoExecutableBit: the mode made from what Windows
// says of a file keeps its type and write permission and never an
// executable bit, so a snapshot taken there records no file executable.
func TestWindowsModeRecordsNoExecutableBit(t *testing.T) {
	for _, c := range []struct {
		in   fs.FileMode
		want uint32
	}{
		{0o666, TypeRegular | 0o666},
		{0o777, TypeRegular | 0o666}, // Go never says so on Windows; were it to, no bit is kept
		{0o444, TypeRegular | 0o444},
		{fs.ModeDir | 0o777, TypeDir | 0o666},
		{fs.ModeSymlink | 0o666, TypeSymlink | 0o666},
		{fs.ModeNamedPipe | 0o666, 0o010000 | 0o666},
	} {
		got := windowsMode(c.in)
		if got != c.want || (Stat{Mode: got}).Exec() {
			t.Errorf("windowsMode(%v) = %o, want %o", c.in, got, c.want)
		}
	}
}
