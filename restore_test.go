package casckpt_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/testtree"
)

func TestRestoreNeverTouchesExcludedPaths(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{
		"main.go":    {Data: "v1"},
		".gitignore": {Data: "secret.txt\n"},
	})
	old := mustSnapshot(t, s, dir, casckpt.SnapshotOptions{})
	excluded := testtree.Tree{
		".env":                 {Data: "TOKEN=1"},
		"node_modules/x/i.js":  {Data: "dep"},
		"secret.txt":           {Data: "ignored"},
		".git/HEAD":            {Data: "ref: refs/heads/main"},
		"created-after.go":     {Data: "new"},
		"big/only-copy.bin":    {Data: strings.Repeat("z", 3<<20)},
		"sub/build/output.txt": {Data: "built"},
	}
	testtree.Write(t, dir, excluded)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("v2"), 0o644)
	r, err := s.Restore(ctx, dir, casckpt.Ref(old.ID.String()), casckpt.RestoreOptions{MaxFileSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if r.PreRestoreID.IsZero() || r.Deleted != 1 {
		t.Fatalf("restore: %+v", r)
	}
	got := testtree.Read(t, dir)
	for p, e := range excluded {
		if p == "created-after.go" {
			if _, ok := got[p]; ok {
				t.Error("a file created after the snapshot was left behind")
			}
			continue
		}
		if got[p] != e {
			t.Errorf("excluded %s was touched", p)
		}
	}
	if got["main.go"].Data != "v1" {
		t.Error("main.go not restored")
	}
	// The pre-restore snapshot holds the state just before.
	var buf strings.Builder
	if err := s.Cat(ctx, dir, casckpt.Ref(r.PreRestoreID.String()), "created-after.go", &buf); err != nil || buf.String() != "new" {
		t.Fatalf("pre-restore snapshot lacks the replaced state: %q %v", buf.String(), err)
	}
}

func TestRestoreDoesNotWriteThroughLinks(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	base := t.TempDir()
	dir, outside := filepath.Join(base, "proj"), filepath.Join(base, "outside")
	testtree.Write(t, dir, testtree.Tree{"evil/payload": {Data: "from the snapshot"}, "f": {Data: "x"}})
	testtree.Write(t, outside, testtree.Tree{"payload": {Data: "precious"}})
	snap := mustSnapshot(t, s, dir, casckpt.SnapshotOptions{})
	// The directory becomes a link to outside the project.
	os.RemoveAll(filepath.Join(dir, "evil"))
	os.Symlink(outside, filepath.Join(dir, "evil"))
	if _, err := s.Restore(ctx, dir, casckpt.Ref(snap.ID.String()), casckpt.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "payload")); string(b) != "precious" {
		t.Fatal("restore wrote outside the project through a link")
	}
	if st, err := os.Lstat(filepath.Join(dir, "evil")); err != nil || !st.IsDir() {
		t.Fatal("the link was not replaced by the snapshot's directory")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "evil/payload")); string(b) != "from the snapshot" {
		t.Fatal("payload not restored inside the project")
	}
}

func TestRestorePathsAndDryRun(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{"src/a": {Data: "a1"}, "src/b": {Data: "b1"}, "doc/x": {Data: "x1"}})
	snap := mustSnapshot(t, s, dir, casckpt.SnapshotOptions{})
	ref := casckpt.Ref(snap.ID.String())
	testtree.Write(t, dir, testtree.Tree{"src/c": {Data: "c2"}})
	os.WriteFile(filepath.Join(dir, "src/a"), []byte("a2"), 0o644)
	os.WriteFile(filepath.Join(dir, "doc/x"), []byte("x2"), 0o644)
	edited := testtree.Read(t, dir)

	dry, err := s.Restore(ctx, dir, ref, casckpt.RestoreOptions{DryRun: true})
	if err != nil || dry.Written != 2 || dry.Deleted != 1 || !dry.PreRestoreID.IsZero() {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	if d := testtree.Equal(edited, testtree.Read(t, dir)); d != "" {
		t.Fatalf("dry run changed the tree: %s", d)
	}
	if l, _ := s.List(ctx, dir, 0); len(l) != 1 {
		t.Fatal("dry run took a snapshot")
	}
	for _, bad := range []string{"/etc", "../x", "src/../../x", "missing"} {
		_, err := s.Restore(ctx, dir, ref, casckpt.RestoreOptions{Paths: []string{bad}})
		if !errors.Is(err, casckpt.ErrRefused) && !errors.Is(err, casckpt.ErrNotFound) {
			t.Errorf("restore of %q: %v", bad, err)
		}
	}
	if d := testtree.Equal(edited, testtree.Read(t, dir)); d != "" {
		t.Fatalf("a refused restore changed the tree: %s", d)
	}
	if _, err := s.Restore(ctx, dir, ref, casckpt.RestoreOptions{Paths: []string{"src"}}); err != nil {
		t.Fatal(err)
	}
	got := testtree.Read(t, dir)
	if got["src/a"].Data != "a1" || got["doc/x"].Data != "x2" {
		t.Fatalf("path restore: src/a=%q doc/x=%q", got["src/a"].Data, got["doc/x"].Data)
	}
	if _, ok := got["src/c"]; ok {
		t.Fatal("path restore left a file the snapshot's src lacks")
	}
}

func TestSnapshotRefusals(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	s := openStoreWith(t, casckpt.Options{HomeDir: home})
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, dir := range []string{"/", home, file, filepath.Join(home, "missing")} {
		if _, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{}); err == nil {
			t.Errorf("snapshot of %s was not refused", dir)
		}
	}
	if _, err := os.Stat(s.Location()); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a refused snapshot created the store")
	}
	empty := t.TempDir()
	r, err := s.Snapshot(ctx, empty, casckpt.SnapshotOptions{})
	if err != nil || r.Created || !r.ID.IsZero() {
		t.Fatalf("empty tree: %+v %v", r, err)
	}
}

func TestReferences(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	dir := t.TempDir()
	var ids []string
	for i := range 3 {
		os.WriteFile(filepath.Join(dir, "f"), []byte{byte(i)}, 0o644)
		ids = append(ids, mustSnapshot(t, s, dir, casckpt.SnapshotOptions{}).ID.String())
	}
	var buf strings.Builder
	if err := s.Cat(ctx, dir, "@1", "f", &buf); err != nil || buf.String() != "\x02" {
		t.Fatalf("@1 is not the newest: %q %v", buf.String(), err)
	}
	buf.Reset()
	if err := s.Cat(ctx, dir, casckpt.Ref(strings.ToUpper(ids[0][:6])), "f", &buf); err != nil || buf.String() != "\x00" {
		t.Fatalf("prefix: %q %v", buf.String(), err)
	}
	for ref, want := range map[string]error{
		"@0": casckpt.ErrBadRef, "@4": casckpt.ErrNotFound, "abc": casckpt.ErrBadRef, "-rf": casckpt.ErrBadRef,
		"../etc": casckpt.ErrBadRef, "ffff": casckpt.ErrNotFound, "@01": casckpt.ErrBadRef,
	} {
		if err := s.Cat(ctx, dir, casckpt.Ref(ref), "f", &buf); !errors.Is(err, want) {
			t.Errorf("ref %q: %v, want %v", ref, err, want)
		}
	}
}

func TestRestoreLeavesADirectoryWithExcludedFilesInPlace(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{"cache": {Data: "was a file"}, "main.go": {Data: "v1"}})
	snap := mustSnapshot(t, s, dir, casckpt.SnapshotOptions{})
	os.Remove(filepath.Join(dir, "cache"))
	testtree.Write(t, dir, testtree.Tree{"cache/.env": {Data: "SECRET"}, "cache/data.txt": {Data: "d"}, "main.go": {Data: "v2"}})
	r, err := s.Restore(ctx, dir, casckpt.Ref(snap.ID.String()), casckpt.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Skipped) == 0 || r.Skipped[0] != "cache" {
		t.Fatalf("skipped %q, want the directory holding .env", r.Skipped)
	}
	got := testtree.Read(t, dir)
	if got["cache/.env"].Data != "SECRET" || got["main.go"].Data != "v1" {
		t.Fatalf("restore around an excluded file: %+v", got)
	}
}

func TestSnapshotsOfADeletedDirectoryStayReadable(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	dir := filepath.Join(t.TempDir(), "gone")
	testtree.Write(t, dir, testtree.Tree{"notes.txt": {Data: "keep me"}})
	mustSnapshot(t, s, dir, casckpt.SnapshotOptions{})
	os.RemoveAll(dir)
	list, err := s.List(ctx, dir, 0)
	if err != nil || len(list) != 1 {
		t.Fatalf("list of a deleted project: %d %v", len(list), err)
	}
	var b strings.Builder
	if err := s.Cat(ctx, dir, "@1", "notes.txt", &b); err != nil || b.String() != "keep me" {
		t.Fatalf("cat from a deleted project: %q %v", b.String(), err)
	}
}

func TestRestoreReportsProgress(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	dir := t.TempDir()
	tree := testtree.Tree{"a.txt": {Data: "aaa"}, "sub/b.txt": {Data: strings.Repeat("b", 70_000)}, "link": {Link: "a.txt"}, "same.txt": {Data: "same"}}
	testtree.Write(t, dir, tree)
	snap := mustSnapshot(t, s, dir, casckpt.SnapshotOptions{})
	os.RemoveAll(filepath.Join(dir, "sub"))
	os.Remove(filepath.Join(dir, "link"))
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("changed"), 0o644)
	os.WriteFile(filepath.Join(dir, "new.txt"), []byte("new"), 0o644)

	type call struct{ files, filesTotal, bytes, bytesTotal int64 }
	var mu sync.Mutex
	var calls []call
	r, err := s.Restore(ctx, dir, casckpt.Ref(snap.ID.String()), casckpt.RestoreOptions{
		Progress: func(files, filesTotal, bytes, bytesTotal int64) {
			mu.Lock()
			calls = append(calls, call{files, filesTotal, bytes, bytesTotal})
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := call{3, 3, 3 + 70_000, 3 + 70_000} // a.txt, sub/b.txt, link
	if r.Written != 3 || len(calls) != 4 || calls[0] != (call{0, 3, 0, want.bytesTotal}) || calls[len(calls)-1] != want {
		t.Fatalf("written %d, progress calls %v, want the last %v", r.Written, calls, want)
	}
	for i := 1; i < len(calls); i++ {
		if calls[i].files < calls[i-1].files || calls[i].bytes < calls[i-1].bytes {
			t.Fatalf("progress went back: %v", calls)
		}
	}
	if d := testtree.Equal(testtree.WithDirs(tree), testtree.Read(t, dir)); d != "" {
		t.Fatal(d)
	}
}

// A path the snapshot holds is restored even where it is excluded now,
// unless an excluded entry of the other kind stands there.
func TestRestoreOverExcludedEntries(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{"node_modules": {Data: "a file once"}, "gen/out.txt": {Data: "v1"}, "main.go": {Data: "v1"}})
	snap := mustSnapshot(t, s, dir, casckpt.SnapshotOptions{})
	os.Remove(filepath.Join(dir, "node_modules"))
	testtree.Write(t, dir, testtree.Tree{"node_modules/dep/i.js": {Data: "dep"}, ".gitignore": {Data: "gen/\n"},
		"gen/out.txt": {Data: "v2"}, "gen/other.txt": {Data: "mine"}, "main.go": {Data: "v2"}})
	r, err := s.Restore(ctx, dir, casckpt.Ref(snap.ID.String()), casckpt.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := testtree.Read(t, dir)
	if got["node_modules/dep/i.js"].Data != "dep" || len(r.Skipped) != 1 || r.Skipped[0] != "node_modules" {
		t.Fatalf("an excluded directory in the way of a file: skipped %q, dep %q", r.Skipped, got["node_modules/dep/i.js"].Data)
	}
	for p, want := range map[string]string{"gen/out.txt": "v1", "gen/other.txt": "mine", "main.go": "v1"} {
		if got[p].Data != want {
			t.Errorf("%s is %q, want %q", p, got[p].Data, want)
		}
	}
}
