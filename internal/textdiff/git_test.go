package textdiff

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMatchesGit: on random edits of real files (this module's sources
// and docs, and some of Go's), Unified's patch is git diff's, hunk for
// hunk and line for line, and Unified and Count count the lines git's
// patch adds and removes (git is the oracle; the test is skipped without
// it). The edits delete runs of lines, insert new lines and copies of
// nearby ones (which a diff may align in several ways), change and
// duplicate lines, and add or drop the last newline.
func TestMatchesGit(t *testing.T) {
	git := needGit(t)
	files := realFiles(t)
	rng := rand.New(rand.NewPCG(15, 22))
	cases := 200
	if testing.Short() {
		cases = 20
	}
	for i := range cases {
		name := files[rng.IntN(len(files))]
		old, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		compareWithGit(t, git, fmt.Sprintf("case %d (%s)", i, name), old, randomEdit(rng, old, 1+rng.IntN(12)))
	}
}

// TestMatchesGitOnRewrites: where the diff is long, git's search stops
// early (past a cost that grows with the lines compared, it takes the
// furthest path; in long texts, a far path along a run of equal lines
// first), and so does this package's, at the same places: hundreds of
// deleted and copied runs in one Go file, and in all of net/http's files
// joined (some 60,000 lines).
func TestMatchesGitOnRewrites(t *testing.T) {
	if testing.Short() {
		t.Skip("long diffs take a while")
	}
	git := needGit(t)
	src := goSrc(t)
	one, err := os.ReadFile(filepath.Join(src, "net", "http", "server.go"))
	if err != nil {
		t.Fatal(err)
	}
	names, err := filepath.Glob(filepath.Join(src, "net", "http", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var all []byte
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	rng := rand.New(rand.NewPCG(16, 22))
	for i := range 4 {
		compareWithGit(t, git, fmt.Sprintf("server.go, rewrite %d", i), one, rewrite(rng, one, 100+rng.IntN(400)))
		compareWithGit(t, git, fmt.Sprintf("net/http, rewrite %d", i), all, rewrite(rng, all, 500+rng.IntN(2000)))
	}
}

// compareWithGit checks Unified and Count against git diff --no-index of
// old and new.
func compareWithGit(t *testing.T, git, what string, old, new []byte) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "old"), old, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "new"), new, 0o644); err != nil {
		t.Fatal(err)
	}
	want := gitDiff(t, git, dir)
	got := Unified("a/old", "b/new", old, new)
	ins, del := patchCounts(want)
	if got.Insertions != ins || got.Deletions != del {
		t.Errorf("%s: +%d -%d, git +%d -%d", what, got.Insertions, got.Deletions, ins, del)
	}
	if got.Patch != want {
		t.Errorf("%s: patch differs from git's\n%s", what, firstDifference(got.Patch, want))
	}
	if c := Count(old, new); c.Insertions != ins || c.Deletions != del {
		t.Errorf("%s: Count +%d -%d, git +%d -%d", what, c.Insertions, c.Deletions, ins, del)
	}
}

// needGit returns git's path, or skips the test.
func needGit(t *testing.T) string {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	return git
}

// goSrc is GOROOT/src.
func goSrc(t *testing.T) string {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(goroot)), "src")
}

// rewrite deletes runs of content's lines and inserts copies of runs
// from anywhere in it, n times: the lines stay lines the other side has,
// so the diff is long.
func rewrite(rng *rand.Rand, content []byte, n int) []byte {
	lines := splitLines(content)
	for range n {
		at := rng.IntN(len(lines))
		if rng.IntN(3) == 0 {
			lines = slices.Delete(lines, at, min(at+1+rng.IntN(8), len(lines)))
			continue
		}
		from := rng.IntN(len(lines))
		lines = slices.Insert(lines, at, slices.Clone(lines[from:min(from+1+rng.IntN(6), len(lines))])...)
	}
	return bytes.Join(lines, nil)
}

// realFiles lists text files to edit: this module's Go sources and docs,
// and some of GOROOT's.
func realFiles(t *testing.T) []string {
	src := goSrc(t)
	var files []string
	for _, pattern := range []string{"../../*.go", "../../docs/*.md", "../../manifest/*.go",
		filepath.Join(src, "strings", "*.go"), filepath.Join(src, "net", "http", "*.go")} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("found only %d files to edit", len(files))
	}
	slices.Sort(files)
	return files
}

// randomEdit makes n random edits of content's lines.
func randomEdit(rng *rand.Rand, content []byte, n int) []byte {
	lines := splitLines(content)
	for range n {
		at := rng.IntN(len(lines) + 1)
		switch rng.IntN(6) {
		case 0: // delete a run
			lines = slices.Delete(lines, at, min(at+1+rng.IntN(5), len(lines)))
		case 1: // insert new lines
			for k := range 1 + rng.IntN(4) {
				lines = slices.Insert(lines, at, fmt.Appendf(nil, "\tinserted %d.%d\n", rng.Int(), k))
			}
		case 2: // insert copies of nearby lines
			if from := at - rng.IntN(8); from >= 0 && len(lines) > 0 {
				end := min(from+1+rng.IntN(3), len(lines))
				lines = slices.Insert(lines, at, slices.Clone(lines[from:end])...)
			}
		case 3: // change a line
			if at < len(lines) {
				lines[at] = append(bytes.TrimSuffix(slices.Clone(lines[at]), []byte("\n")), []byte(" // changed\n")...)
			}
		case 4: // duplicate a line in place
			if at < len(lines) {
				lines = slices.Insert(lines, at, lines[at])
			}
		case 5: // add or drop the last newline
			if n := len(lines); n > 0 {
				if l := lines[n-1]; bytes.HasSuffix(l, []byte("\n")) {
					lines[n-1] = l[:len(l)-1]
				} else {
					lines[n-1] = append(slices.Clone(l), '\n')
				}
			}
		}
		// Only the last line may lack its newline.
		for k := 0; k+1 < len(lines); k++ {
			if !bytes.HasSuffix(lines[k], []byte("\n")) {
				lines[k] = append(slices.Clone(lines[k]), '\n')
			}
		}
	}
	return bytes.Join(lines, nil)
}

// gitDiff runs git diff --no-index on dir's files old and new (with no
// configuration but git's defaults: Myers, the indent heuristic, three
// lines of context) and returns its patch from the "---" line on.
func gitDiff(t *testing.T, git, dir string) string {
	cmd := exec.Command(git, "diff", "--no-index", "--no-color", "--no-ext-diff", "-U3", "old", "new")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+dir)
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("git diff: %v", err)
	}
	s := string(out)
	if i := strings.Index(s, "\n--- "); i >= 0 {
		return s[i+1:]
	}
	return ""
}

// patchCounts counts the lines a patch adds and removes.
func patchCounts(patch string) (ins, del int64) {
	for i, l := range strings.Split(patch, "\n") {
		switch {
		case i < 2:
		case strings.HasPrefix(l, "+"):
			ins++
		case strings.HasPrefix(l, "-"):
			del++
		}
	}
	return ins, del
}

// firstDifference shows where two patches part: the line numbers and a
// few lines of each from there.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	i := 0
	for i < len(g) && i < len(w) && g[i] == w[i] {
		i++
	}
	show := func(l []string) string { return strings.Join(l[min(i, len(l)):min(i+6, len(l))], "\n") }
	return fmt.Sprintf("from line %d, got:\n%s\ngit:\n%s", i+1, show(g), show(w))
}
