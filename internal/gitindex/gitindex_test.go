package gitindex

import (
	"bytes"
	"crypto/sha1"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gogit "github.com/go-git/go-git/v5/plumbing/format/index"
)

// fixtures are the index files testdata/make.sh made with git, each with
// the names git ls-files --stage lists.
var fixtures = []string{"v2", "v3", "v4", "sha256", "ita", "conflict", "gitlink"}

func readFixture(t testing.TB, name string) (index []byte, names []string) {
	t.Helper()
	index, err := os.ReadFile(filepath.Join("testdata", "index-"+name+".bin"))
	if err != nil {
		t.Fatal(err)
	}
	list, err := os.ReadFile(filepath.Join("testdata", "names-"+name+".txt"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return index, strings.Split(strings.TrimSuffix(string(list), "\n"), "\n")
}

// TestDecodeFixtures: every version git writes (2, 3 with extended flags,
// 4 with its prefix compression, SHA-256) decodes to git's own list of
// names, long names and conflicts' stages included, and to go-git's.
func TestDecodeFixtures(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			b, want := readFixture(t, name)
			got, err := Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("names %q, git lists %q", got, want)
			}
			if name == "sha256" {
				return // go-git reads SHA-1 indexes only
			}
			if gg := goGitNames(t, b); !slices.Equal(got, gg) {
				t.Fatalf("names %q, go-git reads %q", got, gg)
			}
		})
	}
}

func goGitNames(t testing.TB, b []byte) []string {
	t.Helper()
	var idx gogit.Index
	if err := gogit.NewDecoder(bytes.NewReader(b)).Decode(&idx); err != nil {
		t.Fatalf("go-git: %v", err)
	}
	var names []string
	for _, e := range idx.Entries {
		names = append(names, e.Name)
	}
	return names
}

// TestDecodeRefuses: a split index (its entries are partly in another
// file), a damaged checksum, and a truncated file are errors.
func TestDecodeRefuses(t *testing.T) {
	split, _ := readFixture(t, "split")
	v2, _ := readFixture(t, "v2")
	flipped := bytes.Clone(v2)
	flipped[100] ^= 1
	for name, b := range map[string][]byte{"split": split, "flipped": flipped, "truncated": v2[:len(v2)-1], "empty": nil} {
		if names, err := Decode(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %q, %v; want ErrCorrupt", name, names, err)
		}
	}
}

// TestLoad: the index is found in the project's .git directory, in an
// ancestor's (names below the project, relative to it), and through a
// .git file; a directory is tracked when a tracked file lies below it.
func TestLoad(t *testing.T) {
	index, _ := readFixture(t, "v4")
	repo := t.TempDir()
	writeFile(t, filepath.Join(repo, ".git", "index"), index)

	top, err := Load(repo)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := Load(filepath.Join(repo, "src"))
	if err != nil {
		t.Fatal(err)
	}
	gitdir := filepath.Join(t.TempDir(), "worktrees", "wt")
	writeFile(t, filepath.Join(gitdir, "index"), index)
	wt := t.TempDir()
	writeFile(t, filepath.Join(wt, ".git"), []byte("gitdir: "+gitdir+"\n"))
	viaFile, err := Load(wt)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		tr    *Tracked
		rel   string
		isDir bool
		want  bool
	}{
		{top, "build", true, true},
		{top, "build/sub", true, true},
		{top, "build/sub/x.go", false, true},
		{top, "go/build", true, true},
		{top, "runtime/coverage/cov.go", false, true},
		{top, "src/sp ace.txt", false, true},
		{top, "src/a", true, true},
		{top, "src/a-b", true, true},
		{top, "node_modules", true, false},
		{top, "build/sub/y.go", false, false},
		{top, "buil", true, false},
		{top, "build", false, false}, // a file called build is not the directory
		{sub, "a-b/f", false, true},
		{sub, "a", true, true},
		{sub, "build", true, false}, // ../build is not below src
		{viaFile, "dist/d.go", false, true},
		{viaFile, "cmd/dist", true, true},
	}
	gitlink, _ := readFixture(t, "gitlink")
	sm := t.TempDir()
	writeFile(t, filepath.Join(sm, ".git", "index"), gitlink)
	withSubmodule, err := Load(sm)
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, []struct {
		tr    *Tracked
		rel   string
		isDir bool
		want  bool
	}{
		{withSubmodule, "vendor/build", true, true}, // a submodule's gitlink
		{withSubmodule, "vendor", true, true},
		{withSubmodule, "vendor/buil", true, false},
	}...)
	for _, c := range cases {
		if got := c.tr.Has(c.rel, c.isDir); got != c.want {
			t.Errorf("Has(%q, dir %v) = %v, want %v", c.rel, c.isDir, got, c.want)
		}
	}
}

// TestLoadWithoutIndex: no repository, and a repository without an index
// (nothing added yet), track nothing and are no error; a damaged index is
// an error.
func TestLoadWithoutIndex(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if tr, err := Load(dir); err != nil || tr.Has("x", false) || tr.Len() != 0 {
		t.Fatalf("a repository without an index: %v, %v", tr, err)
	}
	writeFile(t, filepath.Join(dir, ".git", "index"), []byte("DIRC garbage"))
	if _, err := Load(dir); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a damaged index: %v", err)
	}
	writeFile(t, filepath.Join(dir, "w", ".git"), []byte("not a gitdir line\n"))
	if _, err := Load(filepath.Join(dir, "w")); err == nil {
		t.Fatal("a .git file that names no gitdir is no error")
	}
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// FuzzDecode: Decode never panics, and what both it and go-git accept
// they read to the same names. The checksum is set right first, so that the fuzzer
// explores the entries rather than the hash.
func FuzzDecode(f *testing.F) {
	for _, name := range append(fixtures, "split") {
		b, _ := readFixture(f, name)
		if name != "sha256" {
			f.Add(b[:len(b)-sha1.Size])
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		sum := sha1.Sum(body)
		b := append(bytes.Clone(body), sum[:]...)
		names, err := Decode(b)
		if err != nil {
			return
		}
		var idx gogit.Index
		if gogit.NewDecoder(bytes.NewReader(b)).Decode(&idx) != nil {
			return // go-git parses the optional extensions Decode skips, and knows no "sdir"
		}
		var gg []string
		for _, e := range idx.Entries {
			gg = append(gg, e.Name)
		}
		if !slices.Equal(names, gg) {
			t.Fatalf("names %q, go-git reads %q", names, gg)
		}
	})
}

// FuzzParseGitFile: ParseGitFile never panics and returns a gitdir only
// from a "gitdir: " line.
func FuzzParseGitFile(f *testing.F) {
	f.Add([]byte("gitdir: ../.git/worktrees/x\n"))
	f.Add([]byte("gitdir: \n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if dir, ok := ParseGitFile(b); ok && (dir == "" || !bytes.HasPrefix(b, []byte("gitdir: "+dir))) {
			t.Fatalf("%q parsed as %q", b, dir)
		}
	})
}
