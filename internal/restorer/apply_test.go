package restorer

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/casckpt/casckpt/cas/castest"
)

// before and after are the trees of the Apply tests: every kind of change,
// a directory deleted three levels deep, type changes both ways.
var (
	before = spec{
		"keep.txt":           {Data: "same\n"},
		"mod.txt":            {Data: "old content\n"},
		"gone/deep/er/x.txt": {Data: "x"},
		"swap":               {Link: "mod.txt"},
		"dir2file/a.txt":     {Data: "a"},
		"run.sh":             {Data: "#!/bin/sh\n"},
	}
	after = spec{
		"keep.txt":      {Data: "same\n"},
		"mod.txt":       {Data: "new content, longer\n"},
		"new/sub/n.txt": {Data: "n"},
		"swap/in.txt":   {Data: "in"},
		"dir2file":      {Data: "now a file"},
		"run.sh":        {Data: "#!/bin/sh\n", Exec: true},
		"link2":         {Link: "keep.txt"},
		"empty.txt":     {},
	}
)

// tempName matches the temporary files Apply writes, with their directory.
var tempName = regexp.MustCompile(`^(.*/)?\.casckpt-[0-9a-f]{16}\.tmp$`)

// progressLog records the calls of a progress callback.
type progressLog struct {
	mu    sync.Mutex
	calls [][4]int64
}

func (p *progressLog) report(filesDone, filesTotal, bytesDone, bytesTotal int64) {
	p.mu.Lock()
	p.calls = append(p.calls, [4]int64{filesDone, filesTotal, bytesDone, bytesTotal})
	p.mu.Unlock()
}

// check fails t unless the calls went from nothing done to everything
// done, one file at a time, against constant totals.
func (p *progressLog) check(t *testing.T, files, bytes int64) {
	t.Helper()
	if len(p.calls) != int(files)+1 {
		t.Fatalf("%d progress calls, want %d: %v", len(p.calls), files+1, p.calls)
	}
	if first := p.calls[0]; first != [4]int64{0, files, 0, bytes} {
		t.Errorf("first progress call %v, want nothing done of %d files, %d bytes", first, files, bytes)
	}
	if last := p.calls[len(p.calls)-1]; last != [4]int64{files, files, bytes, bytes} {
		t.Errorf("last progress call %v, want everything done", last)
	}
	for i, c := range p.calls {
		if c[0] != int64(i) || c[1] != files || c[3] != bytes || (i > 0 && c[2] < p.calls[i-1][2]) {
			t.Errorf("progress call %d: %v", i, c)
		}
	}
}

func TestApplyOnAFakeFS(t *testing.T) {
	m := castest.NewMemory()
	plan := planOf(t, m, before, after)
	if plan.Written != 7 || plan.Deleted != 2 || plan.Bytes != int64(len("new content, longer\nninnow a file#!/bin/sh\n")) {
		t.Fatalf("plan counts: %d written, %d deleted, %d bytes", plan.Written, plan.Deleted, plan.Bytes)
	}
	dst := newMemFS(before)
	var progress progressLog
	if _, err := Apply(context.Background(), dst, m, plan, Options{Progress: progress.report}); err != nil {
		t.Fatal(err)
	}
	sameSpec(t, dst.spec(), after)
	progress.check(t, int64(plan.Written), plan.Bytes)
	log := dst.logged()
	checkRemovals(t, log, []string{"gone/deep/er/x.txt", "dir2file/a.txt", "gone/deep/er", "gone/deep", "gone", "swap", "dir2file"})
	renamed := checkReplacements(t, log)
	for p, it := range after {
		if _, ok := renamed[p]; !ok && !it.Dir && p != "keep.txt" {
			t.Errorf("%s was not renamed into place", p)
		}
	}
	// The directories whose entries changed are synced, last.
	var synced []string
	lastRename := -1
	for i, l := range log {
		if strings.HasPrefix(l, "rename ") {
			lastRename = i
		}
	}
	for i, l := range log {
		if name, ok := strings.CutPrefix(l, "syncdir "); ok {
			synced = append(synced, name)
			if i < lastRename {
				t.Errorf("%s before the last creation", l)
			}
		}
	}
	if want := []string{".", "new", "new/sub", "swap"}; !sameSet(synced, want) {
		t.Errorf("synced directories %q, want %q", synced, want)
	}
}

// checkRemovals fails t unless log removes exactly want (temporary files
// aside), deepest first, before anything is created.
func checkRemovals(t *testing.T, log, want []string) {
	t.Helper()
	var removed []string
	firstCreate := len(log)
	for i, l := range log {
		op, name, _ := strings.Cut(l, " ")
		switch {
		case op == "remove" && !tempName.MatchString(name):
			if i > firstCreate {
				t.Errorf("%s after the first creation (%s)", l, log[firstCreate])
			}
			removed = append(removed, name)
		case op == "mkdir" || op == "createtemp" || op == "symlink":
			firstCreate = min(firstCreate, i)
		}
	}
	if !sameSet(removed, want) {
		t.Errorf("removed %q, want %q", removed, want)
	}
	for i := 1; i < len(removed); i++ {
		if strings.Count(removed[i], "/") > strings.Count(removed[i-1], "/") {
			t.Errorf("removed %s after the shallower %s", removed[i], removed[i-1])
		}
	}
}

// checkReplacements fails t unless every file and link in log is a new
// temporary file beside its target, synced (files) and renamed over it,
// made after its directory, and no target is changed in place. It returns
// the temporary name of each target.
func checkReplacements(t *testing.T, log []string) map[string]string {
	t.Helper()
	at := map[string]int{} // first index of each "op name"
	for i, l := range log {
		f := strings.Fields(l)
		if _, ok := at[f[0]+" "+f[1]]; !ok {
			at[f[0]+" "+f[1]] = i
		}
	}
	renamed := map[string]string{}
	for _, l := range log {
		f := strings.Fields(l)
		if f[0] != "rename" {
			continue
		}
		tmp, target, synced := f[1], f[2], f[3]
		renamed[target] = tmp
		if !tempName.MatchString(tmp) || path.Dir(tmp) != path.Dir(target) || synced != "synced" {
			t.Errorf("%s: not a synced temporary file beside its target", l)
		}
		created, ok := at["createtemp "+tmp]
		if !ok {
			created = at["symlink "+tmp]
		}
		if made, ok := at["mkdir "+path.Dir(target)]; ok && made > created {
			t.Errorf("%s written before its directory was made", target)
		}
	}
	for _, l := range log {
		if f := strings.Fields(l); renamed[f[1]] != "" && f[0] != "remove" && f[0] != "open" && f[0] != "syncdir" {
			t.Errorf("%s changed in place: %s", f[1], l)
		}
	}
	return renamed
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestApplyLeavesUnplannedEntries: a directory to be deleted that holds an
// entry the plan does not name (an excluded one) is left, with the entry.
func TestApplyLeavesUnplannedEntries(t *testing.T) {
	m := castest.NewMemory()
	plan := planOf(t, m, before, after)
	ignored := spec{"gone/deep/ignored.log": {Data: "log"}}
	dst := newMemFS(plus(before, ignored))
	if _, err := Apply(context.Background(), dst, m, plan, Options{}); err != nil {
		t.Fatal(err)
	}
	sameSpec(t, dst.spec(), plus(after, ignored))
}

// TestApplyReportsTheFailingStep fails each kind of step in turn: the error
// names the step and the path, on one line, and wraps the cause; nothing
// is replaced in place and no temporary file is left.
func TestApplyReportsTheFailingStep(t *testing.T) {
	errInjected := errors.New("injected")
	for _, tc := range []struct {
		name string
		fail *regexp.Regexp // the log line to fail
		want string         // the start of the error
	}{
		{"delete", regexp.MustCompile(`^remove gone/deep/er/x\.txt$`), "restore: delete gone/deep/er/x.txt: "},
		{"create directory", regexp.MustCompile(`^mkdir new/sub$`), "restore: create directory new/sub: "},
		{"create temporary file", regexp.MustCompile(`^createtemp swap/`), "restore: write swap/in.txt: "},
		{"write", regexp.MustCompile(`^write new/sub/`), "restore: write new/sub/n.txt: "},
		{"sync", regexp.MustCompile(`^sync new/sub/`), "restore: write new/sub/n.txt: "},
		{"rename", regexp.MustCompile(`^rename \S+ mod\.txt `), "restore: write mod.txt: "},
		{"link", regexp.MustCompile(`^symlink \.casckpt-`), "restore: write link2: "},
		{"sync directory", regexp.MustCompile(`^syncdir new$`), "restore: sync directory new: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := castest.NewMemory()
			plan := planOf(t, m, before, after)
			dst := newMemFS(before)
			dst.fail = func(line string) error {
				if tc.fail.MatchString(line) {
					return errInjected
				}
				return nil
			}
			_, err := Apply(context.Background(), dst, m, plan, Options{})
			if !errors.Is(err, errInjected) || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q, want one line starting %q wrapping the failure", err, tc.want)
			}
			got, old, new := dst.spec(), withDirs(before), withDirs(after)
			for p, it := range got {
				if tempName.MatchString(p) {
					t.Errorf("temporary file %s left", p)
				}
				if o, ok := old[p]; ok && it != o && it != new[p] {
					t.Errorf("%s is neither old nor new: %+v", p, it)
				}
			}
			if tc.name == "sync directory" {
				sameSpec(t, got, after) // everything is in place
			}
			if tc.name == "delete" && len(dst.logged()) != 0 {
				t.Errorf("went on after a failed delete: %q", dst.logged())
			}
		})
	}
}

// TestApplyStopsOnAMissingChunk: a chunk that cannot be read fails the
// file's write, and the file is left as it was.
func TestApplyStopsOnAMissingChunk(t *testing.T) {
	m := castest.NewMemory()
	plan := planOf(t, m, before, after)
	for _, c := range plan.Changes {
		if c.Path == "mod.txt" {
			m.Delete(c.New.Chunks[1])
		}
	}
	dst := newMemFS(before)
	_, err := Apply(context.Background(), dst, m, plan, Options{})
	if !strings.HasPrefix(err.Error(), "restore: write mod.txt: ") {
		t.Fatalf("error %v", err)
	}
	if got := dst.spec()["mod.txt"]; got != before["mod.txt"] {
		t.Fatalf("mod.txt is %+v", got)
	}
}

// TestApplyToADirectory restores into a real directory through RootFS:
// the tree becomes the target, executable bits included; a file hard
// linked from outside keeps its bytes (a new inode is renamed into
// place); an excluded file in a deleted directory stays; no temporary
// file is left.
func TestApplyToADirectory(t *testing.T) {
	m := castest.NewMemory()
	plan := planOf(t, m, before, after)
	dir, outside := t.TempDir(), filepath.Join(t.TempDir(), "outside.txt")
	writeDir(t, dir, plus(before, spec{"gone/deep/ignored.log": {Data: "log"}}))
	if err := os.Link(filepath.Join(dir, "mod.txt"), outside); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var progress progressLog
	if _, err := Apply(context.Background(), RootFS(root), m, plan, Options{Progress: progress.report}); err != nil {
		t.Fatal(err)
	}
	sameSpec(t, readDir(t, dir), plus(after, spec{"gone/deep/ignored.log": {Data: "log"}}))
	progress.check(t, int64(plan.Written), plan.Bytes)
	if b, _ := os.ReadFile(outside); string(b) != "old content\n" {
		t.Errorf("the hard link outside now holds %q", b)
	}
}

// TestRemoveLeftovers removes regular files no process holds, and never
// follows a link.
func TestRemoveLeftovers(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "precious")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeDir(t, dir, spec{
		".casckpt-0000000000000001.tmp":   {Data: "partial"},
		"a/.casckpt-0000000000000002.tmp": {Data: "partial"},
		".casckpt-0000000000000003.tmp":   {Link: target},
	})
	RemoveLeftovers(dir, []string{".casckpt-0000000000000001.tmp", "a/.casckpt-0000000000000002.tmp", ".casckpt-0000000000000003.tmp", "missing/.casckpt-1.tmp"})
	sameSpec(t, readDir(t, dir), spec{"a": {Dir: true}, ".casckpt-0000000000000003.tmp": {Link: target}})
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatalf("the link's target was changed: %q", b)
	}
}

// TestApplyLeavesWhatChangedSinceThePlan: with SameFile, each path is
// checked right before it is changed; what someone saved, made, replaced
// or deleted after the plan was made is left as it is (with what the plan
// makes below it) and returned, the rest of the plan is carried out, and
// Plan.Without counts what was done.
func TestApplyLeavesWhatChangedSinceThePlan(t *testing.T) {
	m := castest.NewMemory()
	before := spec{
		"mod.txt": {Data: "old"}, "same.txt": {Data: "same"}, "gone.txt": {Data: "gone"}, "del.txt": {Data: "del"},
		"link": {Link: "a"}, "file2dir": {Data: "f"}, "dir2file/x": {Data: "x"}, "keep.txt": {Data: "k"},
	}
	after := spec{
		"mod.txt": {Data: "new"}, "same.txt": {Data: "new too"}, "add.txt": {Data: "added"}, "newdir/y": {Data: "y"},
		"link": {Link: "b"}, "file2dir/z": {Data: "z"}, "dir2file": {Data: "now a file"}, "keep.txt": {Data: "k"},
	}
	plan := planOf(t, m, before, after)
	dst := newMemFS(before)
	// Saved since the plan: a file to rewrite, one to delete, a link to
	// replace, a file to replace by a directory; made since: a file where
	// the plan adds one, a file in a directory to replace by a file, and
	// a file where the plan makes a directory.
	people := spec{
		"mod.txt": {Data: "saved"}, "del.txt": {Data: "saved too"}, "link": {Link: "mine"}, "file2dir": {Data: "saved f"},
		"add.txt": {Data: "made"}, "dir2file/new": {Data: "made in it"}, "newdir": {Data: "a file"},
	}
	for p, it := range people {
		dst.nodes[p] = &memNode{item: it, synced: true}
	}
	same := func(p string, now fs.FileInfo) bool { return now.Sys().(string) == before[p].Data }
	left, err := Apply(context.Background(), dst, m, plan, Options{SameFile: same})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(left)
	wantLeft := []string{"add.txt", "del.txt", "dir2file", "file2dir", "file2dir/z", "link", "mod.txt", "newdir", "newdir/y"}
	if !slices.Equal(left, wantLeft) {
		t.Fatalf("left %q, want %q", left, wantLeft)
	}
	want := plus(people, spec{"same.txt": {Data: "new too"}, "keep.txt": {Data: "k"}})
	sameSpec(t, dst.spec(), want)
	done := plan.Without(left)
	if done.Written != 1 || done.Deleted != 2 { // same.txt; gone.txt and dir2file/x
		t.Fatalf("done: %d written, %d deleted: %v", done.Written, done.Deleted, done.Changes)
	}
}
