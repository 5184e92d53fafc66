package casckpt_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/restorer"
	"github.com/casckpt/casckpt/internal/testtree"
)

// TestRestoreSkipsWhatTheFileSystemCannotHold: restoring onto a file
// system that ignores case and refuses Windows' names writes the first of
// two paths that differ only in case and the names Windows holds, and
// leaves out the rest, each in Skipped and in Kept with its reason.
func TestRestoreSkipsWhatTheFileSystemCannotHold(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	dir := t.TempDir()
	all := testtree.Tree{"README": {Data: "upper"}, "readme": {Data: "lower"}, "CON": {Data: "device"}, "ok.txt": {Data: "ok"}}
	testtree.Write(t, dir, all)
	snap := mustSnapshot(t, s, dir, casckpt.SnapshotOptions{})
	for p := range all {
		if err := os.Remove(filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	casckpt.OnPlatform(t, restorer.Platform{FoldsCase: true, WindowsNames: true})
	res, err := s.Restore(ctx, dir, casckpt.Ref(snap.ID.String()), casckpt.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := testtree.Equal(testtree.Tree{"README": {Data: "upper"}, "ok.txt": {Data: "ok"}}, testtree.Read(t, dir)); d != "" {
		t.Fatalf("after the restore: %s", d)
	}
	if want := []string{"CON", "readme"}; !slices.Equal(res.Skipped, want) || res.Written != 2 {
		t.Fatalf("skipped %q (want %q), %d written", res.Skipped, want, res.Written)
	}
	if len(res.Kept) != 2 || !strings.HasPrefix(res.Kept[0].Reason, restorer.ReasonWindowsName) || res.Kept[1].Reason != restorer.ReasonCaseCollision {
		t.Fatalf("kept %+v", res.Kept)
	}
}
