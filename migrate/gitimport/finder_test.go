package gitimport

import (
	"context"
	"os"
	"path/filepath"
	"slices"
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

// TestStatusAndClearOverAFinder runs the import, Status and Clear over
// the smallest Finder, with no agent's layout: a unit is migrated once
// every commit of every reference is imported under a project, and only
// then deleted.
func TestStatusAndClearOverAFinder(t *testing.T) {
	ctx := context.Background()
	r := newRawStore(t)
	wd := filepath.Join(t.TempDir(), "project")
	root := r.Put("tree", gittest.Tree(gittest.Entry{Mode: "100644", Name: "f", Hash: r.Put("blob", []byte("x\n"))}))
	r.project("a", wd, root)
	store := gittest.NewStore(t)
	status := func() UnitStatus {
		t.Helper()
		st, err := Status(ctx, store, r)
		if err != nil || len(st) != 1 || st[0].Path != r.Dir || st[0].SizeBytes <= 0 {
			t.Fatalf("status: %+v %v", st, err)
		}
		return st[0]
	}
	if status().Migrated {
		t.Fatal("migrated before the import")
	}
	if rep, err := Run(ctx, store, r, Options{}); err != nil || rep.SnapshotsImported != 1 || rep.Projects != 1 || len(rep.Errors) != 0 {
		t.Fatalf("run: %+v %v", rep, err)
	}
	if !status().Migrated {
		t.Fatal("not migrated after the import")
	}

	// A reference that belongs to no project, to a commit no project holds.
	r.Write("refs/heads/stray", r.Commit(root, "stray")+"\n")
	if status().Migrated {
		t.Fatal("migrated with a commit no project holds")
	}
	deleted, kept, _, err := Clear(ctx, store, r, false)
	if err != nil || len(deleted) != 0 || !slices.Equal(kept, []string{r.Dir}) {
		t.Fatalf("clear: deleted %v kept %v: %v", deleted, kept, err)
	}
	// The same reference at a commit the project holds.
	a, err := os.ReadFile(filepath.Join(r.Dir, "refs/heads/a"))
	if err != nil {
		t.Fatal(err)
	}
	r.Write("refs/heads/stray", string(a))
	deleted, kept, freed, err := Clear(ctx, store, r, false)
	if err != nil || !slices.Equal(deleted, []string{r.Dir}) || len(kept) != 0 || freed <= 0 {
		t.Fatalf("clear: deleted %v kept %v freed %d: %v", deleted, kept, freed, err)
	}
	if _, err := os.Stat(r.Dir); !os.IsNotExist(err) {
		t.Fatalf("%s is still there: %v", r.Dir, err)
	}
}
