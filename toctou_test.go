package casckpt_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/testtree"
)

// TestRestoreNeverWritesOutsideWhileDirectoriesTurnIntoLinks swaps a
// directory of the project for a link to outside it, again and again, while
// restores run: whatever a restore manages or fails to do, nothing outside
// the project is ever written.
func TestRestoreNeverWritesOutsideWhileDirectoriesTurnIntoLinks(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	base := t.TempDir()
	dir, outside := filepath.Join(base, "project"), filepath.Join(base, "outside")
	files := testtree.Tree{}
	for i := range 20 {
		files[fmt.Sprintf("d/f%02d.txt", i)] = testtree.Entry{Data: fmt.Sprintf("snapshot content %d", i)}
	}
	testtree.Write(t, dir, files)
	testtree.Write(t, outside, testtree.Tree{"sentinel.txt": {Data: "untouched"}})
	snap := casckpt.Ref(mustSnapshot(t, s, dir, casckpt.SnapshotOptions{}).ID.String())

	rounds := 30
	if testing.Short() {
		rounds = 8
	}
	stop := testtree.FlipToLink(filepath.Join(dir, "d"), outside, 0)
	root, err := os.OpenRoot(dir) // the test's own edits must not follow the link either
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for i := range rounds {
		// Make the restore rewrite every file.
		for p := range files {
			_ = root.WriteFile(filepath.FromSlash(p), []byte(fmt.Sprint("changed ", i)), 0o644)
		}
		_, _ = s.Restore(ctx, dir, snap, casckpt.RestoreOptions{}) // may fail; must not escape
	}
	stop()
	got := testtree.Read(t, outside)
	if len(got) != 1 || got["sentinel.txt"].Data != "untouched" {
		t.Fatalf("a restore wrote outside the project: %v", got)
	}
}
