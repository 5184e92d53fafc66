package migrate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/internal/testtree"
	"github.com/casckpt/casckpt/manifest"
)

// newStore opens an empty store and verifies it when the test ends.
func newStore(t *testing.T) *casckpt.Store {
	t.Helper()
	s, err := casckpt.Open(filepath.Join(t.TempDir(), "store"), casckpt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		v, err := s.Verify(context.Background())
		if err != nil || len(v.Damaged) != 0 {
			t.Errorf("verify: %+v %v", v, err)
		}
	})
	return s
}

// hideGit empties PATH for the rest of the test.
func hideGit(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := exec.LookPath("git"); err == nil {
		t.Fatal("git is still reachable")
	}
}

// snapshotView reads a snapshot back in the form gitCommit has.
func snapshotView(t *testing.T, s *casckpt.Store, wd string, id cas.ID) (map[string]gitEntry, map[string]bool) {
	t.Helper()
	ctx := context.Background()
	entries, err := s.Ls(ctx, wd, casckpt.Ref(id.String()))
	if err != nil {
		t.Fatal(err)
	}
	files, dirs := map[string]gitEntry{}, map[string]bool{}
	for _, e := range entries {
		switch e.Entry.Kind {
		case manifest.KindDir:
			dirs[e.Path] = true
		case manifest.KindSymlink:
			files[e.Path] = gitEntry{kind: "symlink", data: e.Entry.Target}
		default:
			var b bytes.Buffer
			if err := s.Cat(ctx, wd, casckpt.Ref(id.String()), e.Path, &b); err != nil {
				t.Fatal(err)
			}
			kind := "file"
			if e.Entry.Exec {
				kind = "exec"
			}
			if int64(b.Len()) != e.Entry.Size {
				t.Errorf("%s: size %d, content %d bytes", e.Path, e.Entry.Size, b.Len())
			}
			files[e.Path] = gitEntry{kind: kind, data: b.String()}
		}
	}
	return files, dirs
}

// checkImported compares every project's snapshots with git's commits.
func checkImported(t *testing.T, s *casckpt.Store, f *fixture) {
	t.Helper()
	ctx := context.Background()
	for wd, commits := range f.want {
		list, err := s.List(ctx, wd, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != len(commits) {
			t.Fatalf("%s: %d snapshots, git has %d commits", wd, len(list), len(commits))
		}
		for i, c := range commits {
			snap := list[len(list)-1-i] // List is newest first
			name := filepath.Base(wd) + " commit " + c.hash[:8]
			if snap.Time.Unix() != c.author || snap.Reason != c.reason {
				t.Errorf("%s: time %d reason %q, git has author time %d and %q", name, snap.Time.Unix(), snap.Reason, c.author, c.reason)
			}
			files, dirs := snapshotView(t, s, wd, snap.ID)
			for p, w := range c.files {
				if g, ok := files[p]; !ok {
					t.Errorf("%s: %s is missing", name, p)
				} else if g != w {
					t.Errorf("%s: %s is %s %q, git has %s %q", name, p, g.kind, short(g.data), w.kind, short(w.data))
				}
			}
			for p := range files {
				if _, ok := c.files[p]; !ok {
					t.Errorf("%s: %s is not in git's commit", name, p)
				}
			}
			if !mapsEqual(dirs, c.dirs) {
				t.Errorf("%s: directories %v, git implies %v", name, keys(dirs), keys(c.dirs))
			}
			if snap.Files != int64(len(c.files)) {
				t.Errorf("%s: stats count %d files, git has %d", name, snap.Files, len(c.files))
			}
		}
	}
}

func short(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

func mapsEqual(a, b map[string]bool) bool {
	return slices.Equal(keys(a), keys(b))
}

func keys(m map[string]bool) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestFindListsRepositoriesAndIgnoresJunk(t *testing.T) {
	f, from := getFixture(t)
	hideGit(t)
	sources, err := Find(from)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range sources {
		rel, _ := filepath.Rel(from, s.Path)
		unit, _ := filepath.Rel(from, s.Unit)
		dir, _ := filepath.Rel(from, s.Dir)
		var ws []string
		for _, p := range s.Projects {
			ws = append(ws, filepath.Base(p.Workdir)+strings.Join(p.Refs, ","))
		}
		if len(s.Problems) > 0 {
			t.Errorf("%s: problems %v", rel, s.Problems)
		}
		got = append(got, rel+" unit="+unit+" dir="+dir+" "+string(s.Kind)+" "+strings.Join(ws, ";"))
	}
	hash := func(p string) string { return projectHash(f.workdirs[p]) }
	want := []string{
		"0123456789abcdef unit=0123456789abcdef dir=0123456789abcdef shadow gammaHEAD -> refs/heads/trunk,refs/heads/trunk",
		"fedcba9876543210/.git unit=fedcba9876543210 dir=fedcba9876543210 shadow deltaHEAD -> refs/heads/main,refs/heads/main",
		"legacy-20250101-000000/0123456789abcdef unit=legacy-20250101-000000 dir=legacy-20250101-000000/0123456789abcdef shadow gammaHEAD -> refs/heads/trunk,refs/heads/trunk",
		"legacy-20250101-000000/" + hash("beta") + " unit=legacy-20250101-000000 dir=legacy-20250101-000000/" + hash("beta") + " shadow betaHEAD -> refs/heads/master,refs/heads/master",
		"legacy-20250101-000000/store unit=legacy-20250101-000000 dir=legacy-20250101-000000/store shared epsilonrefs/hermes/" + hash("epsilon"),
		"store unit=store dir=store shared alpharefs/hermes/" + hash("alpha") + ";betarefs/hermes/" + hash("beta") + ";prunedrefs/hermes/" + hash("pruned"),
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, s := range sources {
		for _, p := range s.Projects {
			if s.Kind == KindShared && (p.Created.Unix() != 1700000000 || p.LastTouch.UnixMilli() != 1900000000500) {
				t.Errorf("%s: created %v last touch %v, want the project record's", p.Workdir, p.Created, p.LastTouch)
			}
		}
	}
}

func TestImportMatchesGitWithoutGit(t *testing.T) {
	f, from := getFixture(t)
	ctx := context.Background()
	store := newStore(t)
	legacy, err := Status(ctx, store, from)
	if err != nil {
		t.Fatal(err)
	}
	var units []string
	for _, l := range legacy {
		units = append(units, filepath.Base(l.Path))
		if l.Migrated || l.SizeBytes <= 0 {
			t.Errorf("before the import: %+v", l)
		}
	}
	if !slices.Equal(units, f.units) {
		t.Errorf("status lists %v, want %v", units, f.units)
	}
	if _, err := os.Stat(store.Dir()); !os.IsNotExist(err) {
		t.Fatalf("status created the store: %v", err)
	}

	hideGit(t)
	before := testtree.ReadDigest(t, from)
	var calls [][2]int
	rep, err := Run(ctx, store, from, Options{Progress: func(done, total int) { calls = append(calls, [2]int{done, total}) }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Projects != len(f.want) || rep.SnapshotsImported != f.unique || rep.SnapshotsSkipped != f.total-f.unique ||
		len(rep.Errors) != 0 || rep.GitlinksSkipped != f.gitlinks || rep.NamesSkipped != f.badNames {
		t.Fatalf("report: %+v\nwant %d projects, %d imported, %d skipped, %d gitlinks, %d bad names",
			rep, len(f.want), f.unique, f.total-f.unique, f.gitlinks, f.badNames)
	}
	if f.gitlinks != 2 || f.badNames != 2 {
		t.Fatalf("the fixture has %d gitlinks and %d bad names, want 2 and 2", f.gitlinks, f.badNames)
	}
	if len(rep.Sources) != 6 {
		t.Fatalf("%d sources reported", len(rep.Sources))
	}
	for _, s := range rep.Sources {
		for _, p := range s.Projects {
			if p.Failed != 0 || p.Imported+p.Skipped != p.Commits || p.Commits == 0 {
				t.Errorf("%s %s: %+v", s.Path, p.Workdir, p)
			}
			if strings.HasPrefix(s.Path, filepath.Join(from, "legacy-")) && filepath.Base(p.Workdir) == "gamma" && p.Imported != 0 {
				t.Errorf("the copy of gamma's repository imported %d commits again", p.Imported)
			}
		}
	}
	if len(calls) < 2 || calls[0] != [2]int{0, f.total} || calls[len(calls)-1] != [2]int{f.total, f.total} {
		t.Errorf("progress calls %v, want 0..%d", calls, f.total)
	}
	for i := 1; i < len(calls); i++ {
		if calls[i][0] <= calls[i-1][0] || calls[i][1] != f.total {
			t.Errorf("progress went from %v to %v", calls[i-1], calls[i])
		}
	}
	if !maps.Equal(testtree.ReadDigest(t, from), before) {
		t.Fatal("the import changed the legacy stores")
	}
	checkImported(t, store, f)

	// Times are author times: the pruned history's rewritten commits all
	// carry one committer time.
	pruned := f.want[f.workdirs["pruned"]]
	if len(pruned) != 3 || pruned[0].author == pruned[1].author {
		t.Fatalf("pruned history: %+v", pruned)
	}
	// Project records' times are kept.
	st, err := store.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Projects {
		if p.Workdir == f.workdirs["alpha"] && (p.Created.Unix() != 1700000000 || p.LastTouch.Unix() != 1900000000) {
			t.Errorf("alpha: created %v last touch %v", p.Created, p.LastTouch)
		}
	}

	again, err := Run(ctx, store, from, Options{})
	if err != nil || again.SnapshotsImported != 0 || again.SnapshotsSkipped != f.total || len(again.Errors) != 0 {
		t.Fatalf("second run: %+v %v", again, err)
	}
	if !maps.Equal(testtree.ReadDigest(t, from), before) {
		t.Fatal("the second import changed the legacy stores")
	}
	legacy, err = Status(ctx, store, from)
	if err != nil || len(legacy) != len(f.units) {
		t.Fatalf("status: %+v %v", legacy, err)
	}
	for _, l := range legacy {
		if !l.Migrated {
			t.Errorf("after the import: %+v", l)
		}
	}
	if !maps.Equal(testtree.ReadDigest(t, from), before) {
		t.Fatal("status changed the legacy stores")
	}
}

func TestClearLegacyKeepsWhatIsNotImported(t *testing.T) {
	f, from := getFixture(t)
	ctx := context.Background()
	store := newStore(t)

	// Nothing is imported: nothing is deleted.
	deleted, kept, freed, err := ClearLegacy(ctx, store, from, false)
	if err != nil || len(deleted) != 0 || len(kept) != len(f.units) || freed != 0 {
		t.Fatalf("before the import: deleted %v kept %v freed %d: %v", deleted, kept, freed, err)
	}
	if _, err := Run(ctx, store, from, Options{}); err != nil {
		t.Fatal(err)
	}
	// A checkpoint taken in gamma's repository after the import.
	gamma := filepath.Join(from, "0123456789abcdef")
	b := &builder{home: t.TempDir(), clock: 1_800_000_000}
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatal(r)
			}
		}()
		late := b.git(gamma, "", "", "", nil, "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "late checkpoint")
		b.git(gamma, "", "", "", nil, "update-ref", "refs/heads/trunk", late)
	}()
	hideGit(t)

	sizes := map[string]int64{}
	legacy, err := Status(ctx, store, from)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range legacy {
		sizes[l.Path] = l.SizeBytes
		if l.Migrated != (l.Path != gamma) {
			t.Errorf("status: %+v", l)
		}
	}
	before := testtree.ReadDigest(t, from)
	deleted, kept, freed, err = ClearLegacy(ctx, store, from, true)
	if err != nil || len(deleted) != 3 || !slices.Equal(kept, []string{gamma}) || freed == 0 {
		t.Fatalf("dry run: deleted %v kept %v freed %d: %v", deleted, kept, freed, err)
	}
	if !maps.Equal(testtree.ReadDigest(t, from), before) {
		t.Fatal("the dry run changed the legacy stores")
	}
	deleted, kept, freed, err = ClearLegacy(ctx, store, from, false)
	if err != nil || len(deleted) != 3 || !slices.Equal(kept, []string{gamma}) {
		t.Fatalf("deleted %v kept %v: %v", deleted, kept, err)
	}
	var want int64
	for _, d := range deleted {
		want += sizes[d]
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s still exists", d)
		}
	}
	if freed != want {
		t.Errorf("freed %d bytes, the deleted stores held %d", freed, want)
	}
	if _, err := os.Stat(filepath.Join(gamma, "HERMES_WORKDIR")); err != nil {
		t.Fatal("the store not fully imported was deleted")
	}
	for _, junk := range []string{".last_prune", ".gc-pending", "ledgers"} {
		if _, err := os.Stat(filepath.Join(from, junk)); err != nil {
			t.Errorf("%s was deleted: %v", junk, err)
		}
	}

	// Importing the late commit lets it go too.
	rep, err := Run(ctx, store, from, Options{})
	if err != nil || rep.SnapshotsImported != 1 {
		t.Fatalf("import of the late commit: %+v %v", rep, err)
	}
	deleted, kept, _, err = ClearLegacy(ctx, store, from, false)
	if err != nil || !slices.Equal(deleted, []string{gamma}) || len(kept) != 0 {
		t.Fatalf("deleted %v kept %v: %v", deleted, kept, err)
	}
}

func TestDamagedSourcesAreReportedAndSkipped(t *testing.T) {
	if fx == nil {
		t.Skip("the git program is needed to build the legacy stores")
	}
	base := t.TempDir()
	from := filepath.Join(base, "checkpoints")
	b := &builder{home: base, clock: 1_700_000_000}
	var wd = map[string]string{}
	for _, n := range []string{"ok", "holes", "packed", "norecord"} {
		wd[n] = filepath.Join(base, "work", n)
	}
	var missingBlob, orphanRef string
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatal(r)
			}
		}()
		store := filepath.Join(from, "store")
		b.initShared(store)
		register(store, wd["ok"])
		register(store, wd["holes"])
		files(wd["ok"], map[string]string{"ok.txt": "fine\n"})
		b.hermesCommit(store, wd["ok"], "ok 1")
		// holes: its second commit's new blob goes missing.
		files(wd["holes"], map[string]string{"h.txt": "one\n"})
		b.hermesCommit(store, wd["holes"], "holes 1")
		files(wd["holes"], map[string]string{"lost.txt": "this blob will be lost\n"})
		b.hermesCommit(store, wd["holes"], "holes 2")
		missingBlob = b.git(store, "", "", "this blob will be lost\n", nil, "hash-object", "--stdin")
		files(wd["holes"], map[string]string{"lost.txt": "", "h.txt": "three\n"})
		b.hermesCommit(store, wd["holes"], "holes 3")
		must(os.Remove(filepath.Join(store, "objects", missingBlob[:2], missingBlob[2:])))
		// A ref without its project record.
		files(wd["norecord"], map[string]string{"n.txt": "n\n"})
		b.hermesCommit(store, wd["norecord"], "no record")
		orphanRef = "refs/hermes/" + projectHash(wd["norecord"])

		// A shadow repository whose pack is truncated.
		packed := filepath.Join(from, "1111111111111111")
		b.initShadow(packed, "main")
		must(os.WriteFile(filepath.Join(packed, "HERMES_WORKDIR"), []byte(wd["packed"]), 0o644))
		files(wd["packed"], map[string]string{"p.txt": randomText(rand.New(rand.NewPCG(3, 4)), 2000)})
		b.shadowCommit(packed, wd["packed"], "packed 1")
		b.git(packed, "", "", "", nil, "gc", "-q")
		packs, _ := filepath.Glob(filepath.Join(packed, "objects", "pack", "*.pack"))
		if len(packs) != 1 {
			t.Fatalf("packs: %v", packs)
		}
		st, _ := os.Stat(packs[0])
		must(os.Truncate(packs[0], st.Size()/2))

		// A HERMES_WORKDIR without a repository, and an archived repository
		// whose workdir is unknown.
		must(os.MkdirAll(filepath.Join(from, "2222222222222222"), 0o755))
		must(os.WriteFile(filepath.Join(from, "2222222222222222", "HERMES_WORKDIR"), []byte("/somewhere"), 0o644))
		unknown := filepath.Join(from, "legacy-1", "3333333333333333")
		b.initShadow(unknown, "")
		b.shadowCommit(unknown, wd["ok"], "whose?")
		// A shadow repository recording a relative workdir.
		rel := filepath.Join(from, "legacy-2", "4444444444444444")
		b.initShadow(rel, "")
		must(os.WriteFile(filepath.Join(rel, "HERMES_WORKDIR"), []byte("relative/dir"), 0o644))
		b.shadowCommit(rel, wd["ok"], "relative")
		// What is left of a repository that lost its HEAD.
		must(os.MkdirAll(filepath.Join(from, "legacy-3", "5555555555555555", "objects", "pack"), 0o755))
	}()
	hideGit(t)

	ctx := context.Background()
	store := newStore(t)
	before := testtree.ReadDigest(t, from)
	rep, err := Run(ctx, store, from, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(testtree.ReadDigest(t, from), before) {
		t.Fatal("the import changed the legacy stores")
	}
	all := strings.Join(rep.Errors, "\n")
	t.Logf("errors:\n%s", all)
	for _, want := range []string{orphanRef, missingBlob, "1111111111111111", "2222222222222222", "3333333333333333", "relative/dir", "holes 2", "5555555555555555"} {
		if !strings.Contains(all, want) {
			t.Errorf("no error mentions %s:\n%s", want, all)
		}
	}
	if rep.SnapshotsImported != 3 {
		t.Errorf("imported %d snapshots, want ok 1, holes 1 and holes 3:\n%+v", rep.SnapshotsImported, rep)
	}
	for _, s := range rep.Sources {
		for _, p := range s.Projects {
			if p.Workdir == wd["holes"] && (p.Commits != 3 || p.Imported != 2 || p.Failed != 1) {
				t.Errorf("holes: %+v", p)
			}
		}
	}
	list, err := store.List(ctx, wd["holes"], 0)
	if err != nil || len(list) != 2 || list[0].Reason != "holes 3" || list[1].Reason != "holes 1" {
		t.Fatalf("holes: %+v %v", list, err)
	}
	legacy, err := Status(ctx, store, from)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range legacy {
		if l.Migrated {
			t.Errorf("a damaged store counts as migrated: %+v", l)
		}
	}
	deleted, kept, _, err := ClearLegacy(ctx, store, from, false)
	if err != nil || len(deleted) != 0 || len(kept) != len(legacy) {
		t.Fatalf("deleted %v kept %v: %v", deleted, kept, err)
	}
	again, err := Run(ctx, store, from, Options{})
	if err != nil || again.SnapshotsImported != 0 || again.SnapshotsSkipped != 3 {
		t.Fatalf("second run: %+v %v", again, err)
	}
}

// TestConverterOddEntries feeds the converter trees git's porcelain would
// not make, from an in-memory repository.
func TestConverterOddEntries(t *testing.T) {
	mem := memory.NewStorage()
	blob := func(data string) plumbing.Hash {
		o := mem.NewEncodedObject()
		o.SetType(plumbing.BlobObject)
		w, _ := o.Writer()
		w.Write([]byte(data))
		w.Close()
		h, err := mem.SetEncodedObject(o)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	tree := func(entries ...object.TreeEntry) plumbing.Hash {
		o := mem.NewEncodedObject()
		if err := (&object.Tree{Entries: entries}).Encode(o); err != nil {
			t.Fatal(err)
		}
		h, err := mem.SetEncodedObject(o)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	emptyDir := tree()
	onlyGitlink := tree(object.TreeEntry{Name: "s", Mode: filemode.Submodule, Hash: plumbing.NewHash(strings.Repeat("ab", 20))})
	sub := tree(object.TreeEntry{Name: "f", Mode: filemode.Regular, Hash: blob("in sub\n")})
	root := tree(
		object.TreeEntry{Name: "..", Mode: filemode.Regular, Hash: blob("dots")},
		object.TreeEntry{Name: ".GIT", Mode: filemode.Dir, Hash: sub},
		object.TreeEntry{Name: "a", Mode: filemode.Regular, Hash: blob("a\n")},
		object.TreeEntry{Name: "d", Mode: filemode.Dir, Hash: sub},
		object.TreeEntry{Name: "empty", Mode: filemode.Dir, Hash: emptyDir},
		object.TreeEntry{Name: "g", Mode: filemode.Dir, Hash: onlyGitlink},
		object.TreeEntry{Name: "old-exec", Mode: filemode.FileMode(0o100775), Hash: blob("#!/bin/sh\n")},
		object.TreeEntry{Name: "old-group", Mode: filemode.Deprecated, Hash: blob("664\n")},
		object.TreeEntry{Name: "weird", Mode: filemode.FileMode(0o070000), Hash: blob("?")},
		object.TreeEntry{Name: "zlink", Mode: filemode.Symlink, Hash: blob("a")},
	)
	store := newStore(t)
	ctx := context.Background()
	var res treeResult
	wd := t.TempDir()
	_, err := store.Import(ctx, casckpt.ImportProject{Workdir: wd, Snapshots: []casckpt.ImportSnapshot{{Origin: "test",
		Build: func(ctx context.Context, put cas.Putter) (cas.ID, int64, int64, error) {
			var err error
			res, err = newConverter(mem, put, 50_000, 10<<20).root(ctx, root)
			return res.id, res.files, res.bytes, err
		}}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.gitlinks != 2 || res.badNames != 2 || res.files != 5 {
		t.Errorf("result %+v, want 2 gitlinks (g/s, and weird as git reads it), 2 bad names (.GIT, ..), 5 files", res)
	}
	files, dirs := snapshotView(t, store, wd, mustOnly(t, store, wd))
	want := map[string]gitEntry{"a": {"file", "a\n"}, "d/f": {"file", "in sub\n"}, "old-exec": {"exec", "#!/bin/sh\n"},
		"old-group": {"file", "664\n"}, "zlink": {"symlink", "a"}}
	if !mapsEqualEntries(files, want) || !slices.Equal(keys(dirs), []string{"d"}) {
		t.Errorf("files %v dirs %v", files, keys(dirs))
	}

	// A tree that is not there is the source's fault.
	_, err = store.Import(ctx, casckpt.ImportProject{Workdir: wd, Snapshots: []casckpt.ImportSnapshot{{Origin: "test2",
		Build: func(ctx context.Context, put cas.Putter) (cas.ID, int64, int64, error) {
			_, err := newConverter(mem, put, 50_000, 10<<20).root(ctx, plumbing.NewHash(strings.Repeat("12", 20)))
			return cas.ID{}, 0, 0, err
		}}}})
	if se := (*sourceError)(nil); !errors.As(err, &se) {
		t.Errorf("missing tree: %v", err)
	}
}

func mustOnly(t *testing.T, s *casckpt.Store, wd string) cas.ID {
	list, err := s.List(context.Background(), wd, 0)
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %+v %v", list, err)
	}
	return list[0].ID
}

func mapsEqualEntries(a, b map[string]gitEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestRunStopsWhenCancelled(t *testing.T) {
	_, from := getFixture(t)
	store := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, store, from, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v", err)
	}
}

func TestMissingSourceDirectoryHoldsNothing(t *testing.T) {
	ctx := context.Background()
	store := newStore(t)
	from := filepath.Join(t.TempDir(), "nothing")
	sources, err := Find(from)
	if err != nil || len(sources) != 0 || sources == nil {
		t.Fatalf("find: %v %v", sources, err)
	}
	rep, err := Run(ctx, store, from, Options{})
	if err != nil || rep.Projects != 0 || rep.Errors == nil || len(rep.Errors) != 0 {
		t.Fatalf("run: %+v %v", rep, err)
	}
	legacy, err := Status(ctx, store, from)
	if err != nil || len(legacy) != 0 || legacy == nil {
		t.Fatalf("status: %v %v", legacy, err)
	}
	deleted, kept, _, err := ClearLegacy(ctx, store, from, false)
	if err != nil || deleted == nil || kept == nil || len(deleted)+len(kept) != 0 {
		t.Fatalf("clear: %v %v %v", deleted, kept, err)
	}
	for _, p := range []string{from, store.Dir()} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s was created", p)
		}
	}
}

func TestReadOnlyFSRefusesWrites(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644)
	st := openRepo(dir)
	defer closeRepo(st)
	fsys := st.Filesystem()
	if _, err := fsys.Create("new"); !errors.Is(err, errReadOnly) {
		t.Errorf("create: %v", err)
	}
	if _, err := fsys.OpenFile("f", os.O_RDWR, 0); !errors.Is(err, errReadOnly) {
		t.Errorf("open read-write: %v", err)
	}
	if err := fsys.MkdirAll("d", 0o755); !errors.Is(err, errReadOnly) {
		t.Errorf("mkdir: %v", err)
	}
	if err := fsys.Rename("f", "g"); !errors.Is(err, errReadOnly) {
		t.Errorf("rename: %v", err)
	}
	if err := fsys.Remove("f"); !errors.Is(err, errReadOnly) {
		t.Errorf("remove: %v", err)
	}
	f, err := fsys.Open("f")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("y")); err == nil {
		t.Error("a file opened for reading took a write")
	}
	f.Close()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || path.Base(entries[0].Name()) != "f" {
		t.Errorf("the directory holds %v", entries)
	}
}

func TestFirstLine(t *testing.T) {
	for _, c := range []struct{ msg, enc, want string }{
		{"subject\n\nbody", "", "subject"},
		{"\n\n  subject  \r\nmore", "", "subject"},
		{"", "", ""},
		{"caf\xe9", "ISO-8859-1", "café"},
		{"bad \xff byte", "", "bad \uFFFD byte"},
	} {
		if got := firstLine(c.msg, c.enc); got != c.want {
			t.Errorf("firstLine(%q, %q) = %q, want %q", c.msg, c.enc, got, c.want)
		}
	}
}

// TestProjectWhoseDirectoryIsGone imports an orphan project: Hermes keeps
// the history of a deleted directory until it prunes.
func TestProjectWhoseDirectoryIsGone(t *testing.T) {
	if fx == nil {
		t.Skip("the git program is needed to build the legacy stores")
	}
	base := t.TempDir()
	from := filepath.Join(base, "checkpoints")
	wd := filepath.Join(base, "work", "gone")
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatal(r)
			}
		}()
		b := &builder{home: base, clock: 1_700_000_000}
		store := filepath.Join(from, "store")
		b.initShared(store)
		register(store, wd)
		files(wd, map[string]string{"f.txt": "soon an orphan\n"})
		b.hermesCommit(store, wd, "orphan")
	}()
	if err := os.RemoveAll(wd); err != nil {
		t.Fatal(err)
	}
	hideGit(t)
	ctx := context.Background()
	store := newStore(t)
	rep, err := Run(ctx, store, from, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.SnapshotsImported != 1 || len(rep.Errors) != 0 {
		t.Fatalf("report: %+v", rep)
	}
	list, err := store.List(ctx, wd, 0)
	if err != nil || len(list) != 1 || list[0].Reason != "orphan" {
		t.Fatalf("list: %+v %v", list, err)
	}
}

// failingImporter fails every Import with err, counting the calls.
type failingImporter struct {
	Importer
	err   error
	calls int
}

func (f *failingImporter) Import(context.Context, casckpt.ImportProject) (casckpt.ImportResult, error) {
	f.calls++
	return casckpt.ImportResult{}, f.err
}

// TestRunStopsWhenTheStoreFails: a busy or damaged store ends the run at
// the first project (every other would fail the same way); any other
// import failure is the project's, reported, and the run goes on.
func TestRunStopsWhenTheStoreFails(t *testing.T) {
	f, from := getFixture(t)
	for _, tc := range []struct {
		err  error
		stop bool
	}{
		{fmt.Errorf("%w: another casckpt process holds the lock", casckpt.ErrBusy), true},
		{fmt.Errorf("%w: bad page", casckpt.ErrDatabase), true},
		{errors.New("one project fails"), false},
	} {
		imp := &failingImporter{Importer: newStore(t), err: tc.err}
		rep, err := Run(context.Background(), imp, from, Options{})
		if tc.stop && (!errors.Is(err, tc.err) || imp.calls != 1) {
			t.Fatalf("%v: run returned %v after %d imports; want it to stop at the first", tc.err, err, imp.calls)
		}
		if !tc.stop && (err != nil || imp.calls < len(f.want) || len(rep.Errors) < imp.calls) {
			t.Fatalf("%v: run returned %v after %d imports of %d projects, errors %q", tc.err, err, imp.calls, len(f.want), rep.Errors)
		}
	}
}
