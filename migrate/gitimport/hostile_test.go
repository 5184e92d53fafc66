package gitimport

import (
	"bytes"
	"context"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/migrate/gitimport/gittest"
)

// rawStore is a repository written object by object (gittest.Repo) and
// the smallest Finder: the repository is its one unit, and each of its
// refs/heads/<key> holds the history of the project workdirs[key]; other
// references are unowned.
type rawStore struct {
	*gittest.Repo
	workdirs map[string]string
}

var _ Finder = (*rawStore)(nil)

func newRawStore(t *testing.T) *rawStore {
	return &rawStore{Repo: gittest.NewRepo(t, filepath.Join(t.TempDir(), "repo")), workdirs: map[string]string{}}
}

// project records workdir under key with one commit of tree root.
func (r *rawStore) project(key, workdir, root string) {
	r.ref(key, workdir, r.Commit(root, "checkpoint of "+key))
}

// ref points refs/heads/key, the history of workdir, at commit c.
func (r *rawStore) ref(key, workdir, c string) {
	r.Write("refs/heads/"+key, c+"\n")
	r.workdirs[key] = workdir
}

// Candidates lists the repository.
func (r *rawStore) Candidates() ([]string, error) { return []string{r.Dir}, nil }

// Read reads the repository's references and assigns them to projects.
func (r *rawStore) Read(p string) (Unit, bool) {
	s := &Source{Path: p, Dir: p, Unit: p, Projects: []Project{}, Problems: []string{}}
	refs, err := ReadRefs(p)
	if err != nil {
		s.Problems = append(s.Problems, p+": references: "+err.Error())
	}
	for _, ref := range refs {
		key, _ := strings.CutPrefix(ref.Name, "refs/heads/")
		if wd, ok := r.workdirs[key]; ok {
			s.Projects = append(s.Projects, NewProject(wd, []Ref{ref}))
		} else {
			s.Unowned = append(s.Unowned, ref)
		}
	}
	return Unit{Path: p, Sources: []*Source{s}}, true
}

// A hostile store: a tree that contains itself, a tree bomb, a blob that
// does not match its name and a file over the size limit. Each damaged
// project fails alone with a one-line error; the others are imported; the
// large file is left out unread.
func TestMigrateHostileStore(t *testing.T) {
	r := newRawStore(t)
	base := t.TempDir()
	wd := func(name string) string { return filepath.Join(base, name) }
	small := r.Put("blob", []byte("hello\n"))

	// A loose tree whose entry names the tree itself: its content cannot
	// hash to its name, and walking it never ends.
	self := strings.Repeat("ab", 20)
	r.PutAs(self, "tree", gittest.Tree(gittest.Entry{Mode: "100644", Name: "f", Hash: small}, gittest.Entry{Mode: "40000", Name: "loop", Hash: self}))
	r.project("cycle", wd("cycle"), self)

	// 30 nested trees of two entries each naming the next: 2^30 paths.
	level := r.Put("tree", gittest.Tree(gittest.Entry{Mode: "100644", Name: "f", Hash: small}))
	for range 30 {
		level = r.Put("tree", gittest.Tree(gittest.Entry{Mode: "40000", Name: "a", Hash: level}, gittest.Entry{Mode: "40000", Name: "b", Hash: level}))
	}
	r.project("bomb", wd("bomb"), level)

	// A blob stored under another blob's name.
	liar := r.PutAs(strings.Repeat("cd", 20), "blob", []byte("not what its name says\n"))
	r.project("corrupt", wd("corrupt"), r.Put("tree", gittest.Tree(gittest.Entry{Mode: "100644", Name: "f", Hash: liar})))

	// A large file whose content does not match its name either: it must
	// be left out without being read.
	big := r.PutAs(strings.Repeat("ef", 20), "blob", bytes.Repeat([]byte{'x'}, 2<<20))
	r.project("good", wd("good"), r.Put("tree", gittest.Tree(gittest.Entry{Mode: "100644", Name: "small.txt", Hash: small}, gittest.Entry{Mode: "100644", Name: "big.bin", Hash: big})))

	store := gittest.NewStore(t)
	rep, err := Run(context.Background(), store, r, Options{MaxFileSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if rep.SnapshotsImported != 1 || rep.FilesTooLarge != 1 {
		t.Fatalf("imported %d snapshots, %d files too large; want 1 and 1; errors %q", rep.SnapshotsImported, rep.FilesTooLarge, rep.Errors)
	}
	wantErrs := map[string]string{"cycle": "does not match its hash", "bomb": "more than 50000 files", "corrupt": "does not match its hash"}
	for name, want := range wantErrs {
		found := false
		for _, e := range rep.Errors {
			if strings.Contains(e, wd(name)+":") {
				if found || !strings.Contains(e, want) || strings.Contains(e, "\n") {
					t.Errorf("error of %s: %q, want one line with %q", name, e, want)
				}
				found = true
			}
		}
		if !found {
			t.Errorf("no error for %s in %q", name, rep.Errors)
		}
	}
	if len(rep.Errors) != len(wantErrs) {
		t.Errorf("errors: %q", rep.Errors)
	}
	files, _ := gittest.Snapshot(t, store, wd("good"), gittest.Only(t, store, wd("good")))
	if !maps.Equal(files, map[string]gittest.File{"small.txt": {Kind: "file", Data: "hello\n"}}) {
		t.Errorf("good project holds %v", files)
	}
	list, err := store.List(context.Background(), wd("good"), 0)
	if err != nil || list[0].MaxFileSize != 1<<20 {
		t.Errorf("the imported snapshot's size limit: %+v %v", list, err)
	}
}
