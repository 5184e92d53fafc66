package testtree

import (
	"crypto/sha256"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDigestSeesEveryChange: any change under the root makes the digest
// differ, and reading an unchanged tree again gives an equal one.
func TestDigestSeesEveryChange(t *testing.T) {
	tree := Tree{"a.txt": {Data: "one"}, "d/b.sh": {Data: "#!/bin/sh\n", Exec: true}, "d/link": {Link: "b.sh"}, "empty": {Dir: true}}
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	changes := map[string]func(root string) error{
		"content": func(r string) error { // same size and time
			p := filepath.Join(r, "a.txt")
			st, err := os.Stat(p)
			if err == nil {
				err = os.WriteFile(p, []byte("two"), 0o644)
			}
			if err == nil {
				err = os.Chtimes(p, st.ModTime(), st.ModTime())
			}
			return err
		},
		"mode": func(r string) error { return os.Chmod(filepath.Join(r, "a.txt"), 0o600) },
		"time": func(r string) error { return os.Chtimes(filepath.Join(r, "a.txt"), old, old) },
		"link": func(r string) error {
			os.Remove(filepath.Join(r, "d/link"))
			return os.Symlink("a.txt", filepath.Join(r, "d/link"))
		},
		"new dir": func(r string) error { return os.Mkdir(filepath.Join(r, "empty/sub"), 0o755) },
		"removed": func(r string) error { return os.Remove(filepath.Join(r, "d/b.sh")) },
		"retyped": func(r string) error {
			os.Remove(filepath.Join(r, "empty"))
			return os.WriteFile(filepath.Join(r, "empty"), nil, 0o644)
		},
		"dir time": func(r string) error { return os.Chtimes(filepath.Join(r, "d"), old, old) },
	}
	for name, change := range changes {
		root := t.TempDir()
		Write(t, root, tree)
		before := ReadDigest(t, root)
		if !maps.Equal(before, ReadDigest(t, root)) {
			t.Fatal("an unchanged tree digests differently")
		}
		if err := change(root); err != nil {
			t.Fatal(err)
		}
		if maps.Equal(before, ReadDigest(t, root)) {
			t.Fatalf("%s: the digest did not change", name)
		}
	}
}

func TestDigestFiles(t *testing.T) {
	root := t.TempDir()
	Write(t, root, Tree{"a.txt": {Data: "one"}, "d/b": {Data: "two", Exec: true}, "d/link": {Link: "b"}, "empty": {Dir: true}})
	want := map[string][32]byte{"a.txt": sha256.Sum256([]byte("one")), "d/b": sha256.Sum256([]byte("two"))}
	if got := ReadDigest(t, root).Files(); !maps.Equal(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	other := t.TempDir()
	Write(t, other, Tree{"a.txt": {Data: "one"}, "d/b": {Data: "two"}})
	os.Chtimes(filepath.Join(other, "a.txt"), time.Unix(1, 0), time.Unix(1, 0))
	if !maps.Equal(ReadDigest(t, other).Files(), want) {
		t.Fatal("Files differs for the same contents with other times, modes and directories")
	}
}
