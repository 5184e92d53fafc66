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
// and docs, and some of Go's), Unified and Count count the lines that git
// diff adds and removes (git is the oracle; the test is skipped without
// it), and Unified's patch is git's, hunk for hunk and line for line,
// where the edits leave one alignment of lines: they delete runs of
// lines, insert new lines, change lines, and add or drop the last
// newline. Half the cases also copy nearby lines or duplicate a line,
// which a shortest diff may align in several ways: git's search breaks
// such ties its own way (xdl_split), this package's its own (the hunks
// then hold the same number of lines but some at other places), so there
// the patch must only turn the old content into the new one.
func TestMatchesGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	files := realFiles(t)
	rng := rand.New(rand.NewPCG(15, 22))
	dir := t.TempDir()
	oldPath, newPath := filepath.Join(dir, "old"), filepath.Join(dir, "new")
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
		copies := i%2 == 1
		new := randomEdit(rng, old, copies)
		if err := os.WriteFile(oldPath, old, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(newPath, new, 0o644); err != nil {
			t.Fatal(err)
		}
		want := gitDiff(t, git, dir)
		got := Unified("a/old", "b/new", old, new)
		ins, del := patchCounts(want)
		if got.Insertions != ins || got.Deletions != del {
			t.Errorf("case %d (%s): +%d -%d, git +%d -%d", i, name, got.Insertions, got.Deletions, ins, del)
		}
		if !copies && got.Patch != want {
			t.Errorf("case %d (%s): patch differs from git's\n%s", i, name, firstDifference(got.Patch, want))
		}
		if applied, err := apply(got.Patch, string(old)); err != nil || applied != string(new) {
			t.Errorf("case %d (%s): the patch does not give the new content (%v)", i, name, err)
		}
		c := Count(old, new)
		if c.Insertions != ins || c.Deletions != del {
			t.Errorf("case %d (%s): Count +%d -%d, git +%d -%d", i, name, c.Insertions, c.Deletions, ins, del)
		}
	}
}

// realFiles lists text files to edit: this module's Go sources and docs,
// and some of GOROOT's.
func realFiles(t *testing.T) []string {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	src := filepath.Join(strings.TrimSpace(string(goroot)), "src")
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

// randomEdit makes one to twelve random edits of content's lines, some
// copying lines when copies is set.
func randomEdit(rng *rand.Rand, content []byte, copies bool) []byte {
	lines := splitLines(content)
	for range 1 + rng.IntN(12) {
		at := rng.IntN(len(lines) + 1)
		kind := rng.IntN(6)
		if (kind == 2 || kind == 4) && !copies {
			kind = 1
		}
		switch kind {
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
