package restorer

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/cas/castest"
)

// keptPaths lists the paths of kept, each with its reason's start.
func keptPaths(kept []Kept) []string {
	var out []string
	for _, k := range kept {
		out = append(out, k.Path+": "+k.Reason[:min(len(k.Reason), 20)])
	}
	return out
}

// TestFitKeepsTheFirstOfPathsThatDifferInCase: where case is ignored, of
// the paths of a snapshot that differ only in case the first in plan
// order is restored and each later one (with everything below it) is left
// out with a reason, never written over the first; the rest of the plan
// is restored, to a real directory, as it would be anywhere.
func TestFitKeepsTheFirstOfPathsThatDifferInCase(t *testing.T) {
	m := castest.NewMemory()
	snap := spec{
		"README": {Data: "upper"}, "readme": {Data: "lower"},
		"Docs/a.md": {Data: "a"}, "docs/b.md": {Data: "b"},
		"src/main.go": {Data: "main"},
	}
	plan := planOf(t, m, spec{}, snap)
	if fitted, kept := (Platform{}).Fit(plan); len(kept) != 0 || len(fitted.Changes) != len(plan.Changes) {
		t.Fatalf("a file system that keeps case left out %v", kept)
	}
	fitted, kept := Platform{FoldsCase: true}.Fit(plan)
	want := []string{"docs: " + ReasonCaseCollision[:20], "docs/b.md: " + ReasonCaseCollision[:20], "readme: " + ReasonCaseCollision[:20]}
	if got := keptPaths(kept); !slices.Equal(got, want) {
		t.Fatalf("left out %q, want %q", got, want)
	}
	if fitted.Written != 3 || fitted.Bytes != int64(len("upper")+len("a")+len("main")) {
		t.Fatalf("fitted plan: %d written, %d bytes", fitted.Written, fitted.Bytes)
	}
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if _, err := Apply(context.Background(), RootFS(root), m, fitted, Options{}); err != nil {
		t.Fatal(err)
	}
	sameSpec(t, readDir(t, dir), withDirs(spec{"README": {Data: "upper"}, "Docs/a.md": {Data: "a"}, "src/main.go": {Data: "main"}}))
}

// TestFitLeavesOutNamesWindowsRefuses: where Windows names apply, a path
// with a device name, a trailing dot or space or a forbidden character in
// any of its names is left out with the reason, and so is everything
// below it; a deletion is made whatever the name.
func TestFitLeavesOutNamesWindowsRefuses(t *testing.T) {
	m := castest.NewMemory()
	plan := planOf(t, m, spec{"nul": {Data: "x"}}, spec{
		"CON": {Data: "c"}, "ok.txt": {Data: "ok"}, "dir./x": {Data: "x"}, "a:b": {Data: "ab"}, "sub/aux.log": {Data: "aux"},
	})
	fitted, kept := Platform{WindowsNames: true}.Fit(plan)
	var got []string
	for _, k := range kept {
		if !strings.HasPrefix(k.Reason, ReasonWindowsName) {
			t.Errorf("%s: reason %q", k.Path, k.Reason)
		}
		got = append(got, k.Path)
	}
	if want := []string{"CON", "a:b", "dir.", "dir./x", "sub/aux.log"}; !slices.Equal(got, want) {
		t.Fatalf("left out %q, want %q", got, want)
	}
	var made []string
	for _, c := range fitted.Changes {
		made = append(made, c.Path)
	}
	if want := []string{"nul", "ok.txt", "sub"}; !slices.Equal(made, want) {
		t.Fatalf("fitted plan %q, want %q", made, want)
	}
}

// TestFitLeavesOutLinksTheUserMayNotMake: where the user may not make
// symbolic links (Windows without Developer Mode), each link to write is
// left out with the reason and the path keeps what it holds (a file that
// a link replaces in the snapshot stays); files are restored.
func TestFitLeavesOutLinksTheUserMayNotMake(t *testing.T) {
	m := castest.NewMemory()
	now := spec{"was-file": {Data: "file"}}
	plan := planOf(t, m, now, spec{"a.txt": {Data: "a"}, "link": {Link: "a.txt"}, "was-file": {Link: "a.txt"}})
	fitted, kept := Platform{NoSymlinks: true}.Fit(plan)
	want := []Kept{{Path: "link", Reason: ReasonNoSymlinks}, {Path: "was-file", Reason: ReasonNoSymlinks}}
	if !slices.Equal(kept, want) {
		t.Fatalf("left out %v, want %v", kept, want)
	}
	dst := newMemFS(now)
	if _, err := Apply(context.Background(), dst, m, fitted, Options{}); err != nil {
		t.Fatal(err)
	}
	sameSpec(t, dst.spec(), withDirs(spec{"a.txt": {Data: "a"}, "was-file": {Data: "file"}}))
}

// TestApplyWritesPathsLongerThanWindowsLimit: a path of more than 260
// characters (Windows' old limit) below the project is written, through
// the os.Root that opens each name relative to its directory.
func TestApplyWritesPathsLongerThanWindowsLimit(t *testing.T) {
	m := castest.NewMemory()
	long := strings.Repeat("directory-name-of-forty-characters-long/", 8) + "file.txt"
	want := spec{long: {Data: "deep"}}
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if _, err := Apply(context.Background(), RootFS(root), m, planOf(t, m, spec{}, want), Options{}); err != nil {
		t.Fatal(err)
	}
	if len(filepath.Join(dir, long)) <= 260 {
		t.Fatalf("the path is only %d characters", len(filepath.Join(dir, long)))
	}
	sameSpec(t, readDir(t, dir), withDirs(want))
}
