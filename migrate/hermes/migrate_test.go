package hermes

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/testtree"
	"github.com/casckpt/casckpt/migrate/gitimport"
	"github.com/casckpt/casckpt/migrate/gitimport/gittest"
)

// hideGit empties PATH for the rest of the test.
func hideGit(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := exec.LookPath("git"); err == nil {
		t.Fatal("git is still reachable")
	}
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
			files, dirs := gittest.Snapshot(t, s, wd, snap.ID)
			for p, w := range c.files {
				if g, ok := files[p]; !ok {
					t.Errorf("%s: %s is missing", name, p)
				} else if g != w {
					t.Errorf("%s: %s is %s %q, git has %s %q", name, p, g.Kind, short(g.Data), w.Kind, short(w.Data))
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
	sources, err := findSources(from)
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
	store := gittest.NewStore(t)
	checkStatusBeforeImport(t, store, from, f)

	hideGit(t)
	before := testtree.ReadDigest(t, from)
	var calls [][2]int
	rep, err := Run(ctx, store, from, gitimport.Options{Progress: func(done, total int) { calls = append(calls, [2]int{done, total}) }})
	if err != nil {
		t.Fatal(err)
	}
	checkFixtureReport(t, rep, f, from)
	checkProgressCalls(t, calls, f.total)
	if !maps.Equal(testtree.ReadDigest(t, from), before) {
		t.Fatal("the import changed the legacy stores")
	}
	checkImported(t, store, f)
	checkImportedTimes(t, store, f)

	again, err := Run(ctx, store, from, gitimport.Options{})
	if err != nil || again.SnapshotsImported != 0 || again.SnapshotsSkipped != f.total || len(again.Errors) != 0 {
		t.Fatalf("second run: %+v %v", again, err)
	}
	if !maps.Equal(testtree.ReadDigest(t, from), before) {
		t.Fatal("the second import changed the legacy stores")
	}
	legacy, err := Status(ctx, store, from)
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

// checkStatusBeforeImport checks that Status lists the fixture's units as
// not migrated, each with a size, without creating the store.
func checkStatusBeforeImport(t *testing.T, store *casckpt.Store, from string, f *fixture) {
	t.Helper()
	legacy, err := Status(context.Background(), store, from)
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
	if _, err := os.Stat(store.Location()); !os.IsNotExist(err) {
		t.Fatalf("status created the store: %v", err)
	}
}

// checkFixtureReport checks the report of the first import of the fixture
// (from): its totals, and every project of every source imported, the copy
// of gamma's repository only skipped.
func checkFixtureReport(t *testing.T, rep gitimport.Report, f *fixture, from string) {
	t.Helper()
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
}

// checkProgressCalls checks that progress went from 0 to total, always
// forward, always against the same total.
func checkProgressCalls(t *testing.T, calls [][2]int, total int) {
	t.Helper()
	if len(calls) < 2 || calls[0] != [2]int{0, total} || calls[len(calls)-1] != [2]int{total, total} {
		t.Errorf("progress calls %v, want 0..%d", calls, total)
	}
	for i := 1; i < len(calls); i++ {
		if calls[i][0] <= calls[i-1][0] || calls[i][1] != total {
			t.Errorf("progress went from %v to %v", calls[i-1], calls[i])
		}
	}
}

// checkImportedTimes checks the times the import kept: snapshots carry
// author times (the pruned history's rewritten commits all carry one
// committer time), and projects their records' times.
func checkImportedTimes(t *testing.T, store *casckpt.Store, f *fixture) {
	t.Helper()
	pruned := f.want[f.workdirs["pruned"]]
	if len(pruned) != 3 || pruned[0].author == pruned[1].author {
		t.Fatalf("pruned history: %+v", pruned)
	}
	st, err := store.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Projects {
		if p.Workdir == f.workdirs["alpha"] && (p.Created.Unix() != 1700000000 || p.LastTouch.Unix() != 1900000000) {
			t.Errorf("alpha: created %v last touch %v", p.Created, p.LastTouch)
		}
	}
}

func TestClearLegacyKeepsWhatIsNotImported(t *testing.T) {
	f, from := getFixture(t)
	ctx := context.Background()
	store := gittest.NewStore(t)

	// Nothing is imported: nothing is deleted.
	deleted, kept, freed, err := ClearLegacy(ctx, store, from, false)
	if err != nil || len(deleted) != 0 || len(kept) != len(f.units) || freed != 0 {
		t.Fatalf("before the import: deleted %v kept %v freed %d: %v", deleted, kept, freed, err)
	}
	if _, err := Run(ctx, store, from, gitimport.Options{}); err != nil {
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
	rep, err := Run(ctx, store, from, gitimport.Options{})
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
		missingBlob, orphanRef = damagedSharedStore(b, from, wd)
		damagedShadows(b, from, wd)
	}()
	hideGit(t)

	ctx := context.Background()
	store := gittest.NewStore(t)
	before := testtree.ReadDigest(t, from)
	rep, err := Run(ctx, store, from, gitimport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(testtree.ReadDigest(t, from), before) {
		t.Fatal("the import changed the legacy stores")
	}
	checkDamagedReport(t, rep, wd["holes"], orphanRef, missingBlob)
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
	again, err := Run(ctx, store, from, gitimport.Options{})
	if err != nil || again.SnapshotsImported != 0 || again.SnapshotsSkipped != 3 {
		t.Fatalf("second run: %+v %v", again, err)
	}
}

// damagedSharedStore makes a shared store under from with a sound project
// (ok), one whose second commit's new blob goes missing (holes), and a ref
// without its project record (norecord). It returns the missing blob and
// the orphan ref. It panics when git fails.
func damagedSharedStore(b *builder, from string, wd map[string]string) (missingBlob, orphanRef string) {
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
	return missingBlob, orphanRef
}

// damagedShadows makes shadow repositories under from that cannot be
// imported, each in its own way: a truncated pack, a HERMES_WORKDIR
// without a repository, an archived repository whose workdir is unknown,
// a relative workdir, and what is left of a repository that lost its
// HEAD. It panics when git fails.
func damagedShadows(b *builder, from string, wd map[string]string) {
	// A shadow repository whose pack is truncated.
	packed := filepath.Join(from, "1111111111111111")
	b.initShadow(packed, "main")
	must(os.WriteFile(filepath.Join(packed, "HERMES_WORKDIR"), []byte(wd["packed"]), 0o644))
	files(wd["packed"], map[string]string{"p.txt": randomText(rand.New(rand.NewPCG(3, 4)), 2000)})
	b.shadowCommit(packed, wd["packed"], "packed 1")
	b.git(packed, "", "", "", nil, "gc", "-q")
	packs, _ := filepath.Glob(filepath.Join(packed, "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		b.fail("packs: %v", packs)
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
}

// checkDamagedReport checks that the report of importing the damaged
// sources names every problem, and that only the sound commits were
// imported: ok 1, and holes 1 and 3 (holes, the project at holesWorkdir,
// fails one commit of three).
func checkDamagedReport(t *testing.T, rep gitimport.Report, holesWorkdir, orphanRef, missingBlob string) {
	t.Helper()
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
			if p.Workdir == holesWorkdir && (p.Commits != 3 || p.Imported != 2 || p.Failed != 1) {
				t.Errorf("holes: %+v", p)
			}
		}
	}
}

func TestRunStopsWhenCancelled(t *testing.T) {
	_, from := getFixture(t)
	store := gittest.NewStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, store, from, gitimport.Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v", err)
	}
}

func TestMissingSourceDirectoryHoldsNothing(t *testing.T) {
	ctx := context.Background()
	store := gittest.NewStore(t)
	from := filepath.Join(t.TempDir(), "nothing")
	sources, err := findSources(from)
	if err != nil || len(sources) != 0 || sources == nil {
		t.Fatalf("find: %v %v", sources, err)
	}
	rep, err := Run(ctx, store, from, gitimport.Options{})
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
	for _, p := range []string{from, store.Location()} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s was created", p)
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
	store := gittest.NewStore(t)
	rep, err := Run(ctx, store, from, gitimport.Options{})
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
	gitimport.Importer
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
		imp := &failingImporter{Importer: gittest.NewStore(t), err: tc.err}
		rep, err := Run(context.Background(), imp, from, gitimport.Options{})
		if tc.stop && (!errors.Is(err, tc.err) || imp.calls != 1) {
			t.Fatalf("%v: run returned %v after %d imports; want it to stop at the first", tc.err, err, imp.calls)
		}
		if !tc.stop && (err != nil || imp.calls < len(f.want) || len(rep.Errors) < imp.calls) {
			t.Fatalf("%v: run returned %v after %d imports of %d projects, errors %q", tc.err, err, imp.calls, len(f.want), rep.Errors)
		}
	}
}

// TestMigrateWorkdirNotUTF8: Hermes writes a project record with Python's
// json, so a workdir that is not UTF-8 comes as \udcXX (its
// surrogateescape string): the project is imported at the directory with
// those bytes, not at one with U+FFFD in its name.
func TestMigrateWorkdirNotUTF8(t *testing.T) {
	checkpoints := t.TempDir()
	r := gittest.NewRepo(t, filepath.Join(checkpoints, "store"))
	wd := filepath.Join(t.TempDir(), "proj\xffect")
	root := r.Put("tree", gittest.Tree(gittest.Entry{Mode: "100644", Name: "f", Hash: r.Put("blob", []byte("x\n"))}))
	r.Write("refs/hermes/k", r.Commit(root, "checkpoint of k")+"\n")
	r.Write("projects/k.json", `{"workdir":"`+strings.ReplaceAll(wd, "\xff", `\udcff`)+`"}`)
	store := gittest.NewStore(t)
	rep, err := Run(context.Background(), store, checkpoints, gitimport.Options{})
	if err != nil || rep.SnapshotsImported != 1 || len(rep.Errors) != 0 {
		t.Fatalf("migrate: %+v %v", rep, err)
	}
	files, _ := gittest.Snapshot(t, store, wd, gittest.Only(t, store, wd))
	if !maps.Equal(files, map[string]gittest.File{"f": {Kind: "file", Data: "x\n"}}) {
		t.Errorf("%q holds %v", wd, files)
	}
}
