package restorer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/cas/castest"
)

// manyFiles is a tree of n files, two levels deep, each holding its name
// and version.
func manyFiles(n int, version string) spec {
	s := spec{}
	for i := range n {
		p := fmt.Sprintf("d%d/f%03d.txt", i%7, i)
		s[p] = item{Data: p + " " + version + "\n"}
	}
	return s
}

// TestApplySyncsABatchBeforeRenamingAny: with more files than
// maxOpenTemps, Apply writes them in batches, never holding more than
// maxOpenTemps temporary files open; within a batch every file is synced
// before the first rename, so no rename waits behind a sync and no file
// is renamed unsynced. Every file lands, and the progress counts each.
func TestApplySyncsABatchBeforeRenamingAny(t *testing.T) {
	n := maxOpenTemps + maxOpenTemps/2
	old, new := manyFiles(n, "old"), manyFiles(n, "new")
	m := castest.NewMemory()
	plan := planOf(t, m, old, new)
	dst := newMemFS(old)
	var progress progressLog
	if _, err := Apply(context.Background(), dst, m, plan, Options{Progress: progress.report}); err != nil {
		t.Fatal(err)
	}
	sameSpec(t, dst.spec(), new)
	progress.check(t, int64(plan.Written), plan.Bytes)
	checkReplacements(t, dst.logged())

	open, most, batches := 0, 0, 0
	synced, renaming := 0, false // in the batch under way
	for _, l := range dst.logged() {
		op, name, _ := strings.Cut(l, " ")
		switch {
		case op == "createtemp":
			open++
			most = max(most, open)
		case op == "close" && tempName.MatchString(name):
			open--
		case op == "sync":
			if renaming { // a new batch began
				renaming, synced = false, 0
			}
			synced++
		case op == "rename":
			if !renaming {
				batches++
				renaming = true
				if want := min(maxOpenTemps, n-(batches-1)*maxOpenTemps); synced != want {
					t.Errorf("batch %d: %d files synced before its first rename, want %d", batches, synced, want)
				}
			}
		}
	}
	if most != maxOpenTemps || batches != 2 || open != 0 {
		t.Errorf("at most %d temporary files open (want %d), %d batches (want 2), %d left open", most, maxOpenTemps, batches, open)
	}
}

// TestApplyRenamesNothingOfABatchWhoseSyncFails: a file whose sync fails
// stops the restore before any file of its batch is renamed: every target
// keeps its old bytes, no temporary file is left, and the error names the
// file.
func TestApplyRenamesNothingOfABatchWhoseSyncFails(t *testing.T) {
	old, new := manyFiles(20, "old"), manyFiles(20, "new")
	m := castest.NewMemory()
	plan := planOf(t, m, old, new)
	dst := newMemFS(old)
	errInjected := errors.New("injected")
	dst.fail = func(line string) error {
		if strings.HasPrefix(line, "sync d3/") {
			return errInjected
		}
		return nil
	}
	_, err := Apply(context.Background(), dst, m, plan, Options{})
	if !errors.Is(err, errInjected) || !strings.HasPrefix(err.Error(), "restore: write d3/") {
		t.Fatalf("error %v, want the injected failure naming a file of d3", err)
	}
	sameSpec(t, dst.spec(), withDirs(old))
	for _, l := range dst.logged() {
		if strings.HasPrefix(l, "rename ") {
			t.Errorf("renamed after a failed sync: %s", l)
		}
	}
}

// TestApplyHandsOverTheFilesItUnlinks: with KeepOld, each regular file
// Apply replaces or deletes is handed over open, and is the old file
// (its bytes, unlinked from the tree), so that its blocks are freed only
// when it is closed; what is added or a link is not opened. A file that
// cannot be opened is unlinked all the same.
func TestApplyHandsOverTheFilesItUnlinks(t *testing.T) {
	m := castest.NewMemory()
	plan := planOf(t, m, before, after)
	dir := t.TempDir()
	writeDir(t, dir, before)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var kept []string
	keep := func(old File) {
		b, err := io.ReadAll(old.(io.Reader))
		if err != nil {
			t.Error(err)
		}
		kept = append(kept, string(b))
		old.Close()
	}
	if _, err := Apply(context.Background(), RootFS(root), m, plan, Options{KeepOld: keep}); err != nil {
		t.Fatal(err)
	}
	sameSpec(t, readDir(t, dir), after)
	// mod.txt and run.sh replaced; gone/deep/er/x.txt and dir2file/a.txt
	// deleted (swap, a link, is not a regular file).
	want := []string{"old content\n", "#!/bin/sh\n", "x", "a"}
	if !sameSet(kept, want) {
		t.Errorf("handed over %q, want the old bytes %q", kept, want)
	}

	dst, tried := newMemFS(before), 0
	dst.fail = func(line string) error {
		if strings.HasPrefix(line, "open ") && strings.Contains(line, ".") && line != "open ." { // a file, not a directory
			tried++
			return errors.New("injected")
		}
		return nil
	}
	kept = nil
	if _, err := Apply(context.Background(), dst, m, plan, Options{KeepOld: keep}); err != nil {
		t.Fatal(err)
	}
	sameSpec(t, dst.spec(), after)
	if len(kept) != 0 || tried != len(want) {
		t.Errorf("handed over %q though none of the %d files could be opened (want %d)", kept, tried, len(want))
	}
}
