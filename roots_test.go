package casckpt_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/manifest"
)

// projectStates returns each project's state as Status reports it.
func projectStates(t *testing.T, s *casckpt.Store) map[string]casckpt.ProjectState {
	t.Helper()
	st, err := s.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]casckpt.ProjectState{}
	for _, p := range st.Projects {
		out[p.Workdir] = p.State
	}
	return out
}

// storeDB returns the bytes of the store's database.
func storeDB(t *testing.T, s *casckpt.Store) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.Location(), "casckpt.db"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// quietProject makes dir/proj, a project directory holding a symbolic
// link and an empty directory: no file whose stat cache entry a scan may
// not trust yet (a file changed within statcache.RacyWindow is read and
// recorded again), so a snapshot that finds nothing changed writes nothing.
func quietProject(t *testing.T, dir string) string {
	t.Helper()
	proj := filepath.Join(dir, "proj")
	if err := os.MkdirAll(filepath.Join(proj, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target", filepath.Join(proj, "l")); err != nil {
		t.Fatal(err)
	}
	return proj
}

// TestParentIdentityRefreshedByTouch: a no-change snapshot writes nothing
// when nothing changed, but records a new parent directory, so that a
// later deletion from that parent is an orphan.
func TestParentIdentityRefreshedByTouch(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := openStoreWith(t, casckpt.Options{Now: func() time.Time { return now }})
	base, _ := filepath.EvalSymlinks(t.TempDir())
	proj := quietProject(t, filepath.Join(base, "p"))
	mustSnapshot(t, s, proj, casckpt.SnapshotOptions{})
	before := storeDB(t, s)
	if r := mustSnapshot(t, s, proj, casckpt.SnapshotOptions{}); r.Created || !bytes.Equal(storeDB(t, s), before) {
		t.Fatalf("a no-change snapshot wrote to the database (created %v)", r.Created)
	}

	// The project moves to a new parent of the same name.
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	parent, newParent := filepath.Join(base, "p"), filepath.Join(base, "p2")
	must(os.Mkdir(newParent, 0o755))
	must(os.Rename(proj, filepath.Join(newParent, "proj")))
	must(os.Rename(parent, parent+"-old"))
	must(os.Rename(newParent, parent))
	if r := mustSnapshot(t, s, proj, casckpt.SnapshotOptions{}); r.Created || bytes.Equal(storeDB(t, s), before) {
		t.Fatalf("the new parent was not recorded (created %v)", r.Created)
	}
	before = storeDB(t, s)
	if mustSnapshot(t, s, proj, casckpt.SnapshotOptions{}); !bytes.Equal(storeDB(t, s), before) {
		t.Fatal("a no-change snapshot after the parent was recorded wrote to the database")
	}
	if err := os.RemoveAll(proj); err != nil {
		t.Fatal(err)
	}
	if got := projectStates(t, s)[proj]; got != casckpt.ProjectOrphan {
		t.Fatalf("deleted from its recorded parent: %q", got)
	}
}

// TestProjectWithoutParentIdentityIsNeverOrphan: a project recorded before
// parent identities were (a version-1 record) is unreachable when its
// directory is missing, so prune keeps it until the stale rule drops it.
func TestProjectWithoutParentIdentityIsNeverOrphan(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := now
	s := openStoreWith(t, casckpt.Options{Now: func() time.Time { return clock }})
	proj := quietProject(t, t.TempDir())
	mustSnapshot(t, s, proj, casckpt.SnapshotOptions{})
	proj, _ = filepath.EvalSymlinks(proj)
	db := index.Open(filepath.Join(s.Location(), "casckpt.db"), index.Options{Timeout: time.Second, Chunker: manifest.ChunkerName})
	err := db.Update(func(tx *index.Tx) error {
		p, _, err := tx.Project(proj)
		if err != nil || p.Parent.IsZero() {
			t.Fatalf("the snapshot recorded no parent: %+v %v", p, err)
		}
		p.Parent = index.DirID{}
		return tx.PutProject(p) // as a version-1 record
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(proj); err != nil {
		t.Fatal(err)
	}
	if got := projectStates(t, s)[proj]; got != casckpt.ProjectUnreachable {
		t.Fatalf("state %q", got)
	}
	res, err := s.Prune(ctx, casckpt.PruneOptions{StaleAfter: 7 * 24 * time.Hour})
	if err != nil || res.DeletedOrphan != 0 || res.SnapshotsDropped != 0 {
		t.Fatalf("prune: %+v %v", res, err)
	}
	clock = now.Add(8 * 24 * time.Hour)
	res, err = s.Prune(ctx, casckpt.PruneOptions{StaleAfter: 7 * 24 * time.Hour})
	if err != nil || res.DeletedStale != 1 || res.SnapshotsDropped != 1 {
		t.Fatalf("stale prune: %+v %v", res, err)
	}
}

// Store.Root finds the project a path belongs to: here the directory
// holding go.mod, for a file that does not exist yet.
func ExampleStore_Root() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	project := filepath.Join(dir, "project")
	os.MkdirAll(filepath.Join(project, "src"), 0o755)
	os.WriteFile(filepath.Join(project, "go.mod"), []byte("module example\n"), 0o644)
	store, _ := casckpt.Open(filepath.Join(dir, "store"), casckpt.Options{})

	root, err := store.Root(ctx, filepath.Join(project, "src", "new.go"))
	real, _ := filepath.EvalSymlinks(project)
	fmt.Println(root == real, err)
	// Output: true <nil>
}

// TestFindRootSaysWhetherFound: a file under a marker or a known project
// is found; a file in no project resolves to its own directory, not found.
func TestFindRootSaysWhetherFound(t *testing.T) {
	ctx := context.Background()
	base, _ := filepath.EvalSymlinks(t.TempDir())
	s := openStoreWith(t, casckpt.Options{HomeDir: base}) // no marker above base counts
	marked, known, scratch := filepath.Join(base, "marked"), filepath.Join(base, "known"), filepath.Join(base, "scratch")
	for _, d := range []string{filepath.Join(marked, "src"), filepath.Join(known, "src"), scratch} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(marked, "Makefile"), nil, 0o644)
	os.WriteFile(filepath.Join(known, "a.txt"), []byte("a"), 0o644)
	mustSnapshot(t, s, known, casckpt.SnapshotOptions{})
	for path, want := range map[string]struct {
		root  string
		found bool
	}{
		filepath.Join(marked, "src", "x.go"): {marked, true},
		filepath.Join(known, "src", "x.go"):  {known, true},
		filepath.Join(scratch, "x.py"):       {scratch, false},
	} {
		root, found, err := s.FindRoot(ctx, path)
		if err != nil || root != want.root || found != want.found {
			t.Errorf("FindRoot(%s) = %s, %v, %v; want %s, %v", path, root, found, err, want.root, want.found)
		}
	}
}

// TestEnclosingProject: a directory resolves to the nearest project at or
// above it that the store has snapshots of, with its place in it; one in
// no such project (markers do not count), or one that does not exist, is
// found in none.
func TestEnclosingProject(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	base, _ := filepath.EvalSymlinks(t.TempDir())
	proj := filepath.Join(base, "p")
	os.MkdirAll(filepath.Join(proj, "a", "b"), 0o755)
	os.MkdirAll(filepath.Join(base, "other"), 0o755)
	os.WriteFile(filepath.Join(base, "other", "go.mod"), []byte("module x\n"), 0o644)
	os.WriteFile(filepath.Join(proj, "f"), []byte("f"), 0o644)
	if _, err := s.Snapshot(ctx, proj, casckpt.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir, workdir, sub string
		found             bool
	}{
		{proj, proj, "", true},
		{filepath.Join(proj, "a", "b"), proj, "a/b", true},
		{filepath.Join(proj, "a", "gone"), "", "", false}, // a mistyped name: never the project above
		{filepath.Join(base, "other"), "", "", false},
		{base, "", "", false},
	} {
		workdir, sub, found, err := s.EnclosingProject(ctx, c.dir)
		if err != nil || workdir != c.workdir || sub != c.sub || found != c.found {
			t.Errorf("EnclosingProject(%s) = %q, %q, %v, %v; want %q, %q, %v", c.dir, workdir, sub, found, err, c.workdir, c.sub, c.found)
		}
	}
}
