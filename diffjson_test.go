package casckpt_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/testtree"
)

// TestDiffJSONOnlyForModifiedDocuments checks which files DiffOptions.JSON
// compares value by value: modified files whose versions are both JSON
// documents, against a snapshot or the working tree; never without the
// option, nor for added or deleted files.
func TestDiffJSONOnlyForModifiedDocuments(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{
		"a.json":    {Data: `{"n": 1}`},
		"gone.json": {Data: `{"n": 1}`},
		"bad.json":  {Data: `{"n": 1}`},
	})
	first := mustSnapshot(t, s, dir, casckpt.SnapshotOptions{})
	os.WriteFile(filepath.Join(dir, "a.json"), []byte(`{"n": 2}`), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"n": 2`), 0o644)
	os.WriteFile(filepath.Join(dir, "new.json"), []byte(`{"n": 1}`), 0o644)
	os.Remove(filepath.Join(dir, "gone.json"))
	from := casckpt.Ref(first.ID.String())
	for _, to := range []casckpt.Ref{"", "snapshot"} {
		if to != "" {
			to = casckpt.Ref(mustSnapshot(t, s, dir, casckpt.SnapshotOptions{}).ID.String())
		}
		for _, withJSON := range []bool{false, true} {
			res, err := s.Diff(ctx, dir, from, casckpt.DiffOptions{To: to, JSON: withJSON})
			if err != nil || len(res.Files) != 4 {
				t.Fatalf("diff to %q: %+v %v", to, res.Files, err)
			}
			for _, f := range res.Files {
				want := withJSON && f.Path == "a.json"
				if (f.JSON != nil) != want {
					t.Fatalf("diff to %q, JSON %v: %s has JSON %v", to, withJSON, f.Path, f.JSON)
				}
				if want && (len(f.JSON) != 1 || f.JSON[0].Path != "$.n" || string(f.JSON[0].From) != "1" || string(f.JSON[0].To) != "2") {
					t.Fatalf("diff to %q: a.json's changes %+v", to, f.JSON)
				}
			}
		}
	}
}
