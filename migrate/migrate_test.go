package migrate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/casckpt/casckpt"
)

// gitEnv runs the git program to build fixtures the way Hermes did.
type gitEnv struct {
	t       *testing.T
	gitDir  string
	workdir string
	index   string
	date    int
}

func (g *gitEnv) run(args ...string) string {
	g.t.Helper()
	return strings.TrimSpace(g.raw(args...))
}

// raw runs git and returns its output untouched.
func (g *gitEnv) raw(args ...string) string {
	g.t.Helper()
	cmd := exec.Command("git", args...)
	g.date++
	when := fmt.Sprintf("%d +0000", 1_700_000_000+g.date*60)
	cmd.Env = []string{
		"GIT_DIR=" + g.gitDir, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + g.gitDir,
		"GIT_AUTHOR_NAME=hermes", "GIT_AUTHOR_EMAIL=h@example.com", "GIT_COMMITTER_NAME=hermes",
		"GIT_COMMITTER_EMAIL=h@example.com", "GIT_AUTHOR_DATE=" + when, "GIT_COMMITTER_DATE=" + when,
		"PATH=" + os.Getenv("PATH"),
	}
	if g.workdir != "" {
		cmd.Env = append(cmd.Env, "GIT_WORK_TREE="+g.workdir, "GIT_INDEX_FILE="+g.index)
		cmd.Dir = g.workdir
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		g.t.Fatalf("git %v: %v: %s", args, err, errb.String())
	}
	return out.String()
}

func projectHash(workdir string) string {
	sum := sha256.Sum256([]byte(workdir))
	return hex.EncodeToString(sum[:])[:16]
}

// commit records the work tree on ref (or HEAD's branch) as Hermes does.
func (g *gitEnv) commit(ref, msg string, extra ...string) string {
	g.t.Helper()
	prev := ""
	if out, err := exec.Command("git", "--git-dir", g.gitDir, "rev-parse", "--verify", "-q", ref).Output(); err == nil {
		prev = strings.TrimSpace(string(out))
	}
	if prev != "" {
		g.run("read-tree", prev)
	} else {
		g.run("read-tree", "--empty")
	}
	g.run("add", "-A")
	for _, cacheinfo := range extra {
		g.run("update-index", "--add", "--cacheinfo", cacheinfo)
	}
	tree := g.run("write-tree")
	args := []string{"commit-tree", tree, "-m", msg}
	if prev != "" {
		args = append(args, "-p", prev)
	}
	c := g.run(args...)
	g.run("update-ref", ref, c)
	return c
}

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, data := range files {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(full, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(full, mode)
	}
}

// fixture builds a checkpoints directory with a packed shared store of two
// projects, a loose per-directory shadow repository on another branch
// name, and a shared store under legacy-*. It returns the directory, the
// projects' workdirs, and a function listing every commit per workdir.
type fixture struct {
	from     string
	workdirs []string
	gits     map[string]*gitEnv // by workdir
	refs     map[string]string  // by workdir: the ref holding its history
}

func newFixture(t *testing.T) *fixture {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is needed to build the legacy fixtures")
	}
	base := t.TempDir()
	f := &fixture{from: filepath.Join(base, "checkpoints"), gits: map[string]*gitEnv{}, refs: map[string]string{}}
	shared := filepath.Join(f.from, "store")
	initBare := func(dir string, branch string) {
		cmd := exec.Command("git", "init", "--bare", "-q", "-b", branch, dir)
		cmd.Env = []string{"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "PATH=" + os.Getenv("PATH")}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
		os.MkdirAll(filepath.Join(dir, "indexes"), 0o755)
		os.MkdirAll(filepath.Join(dir, "projects"), 0o755)
	}
	initBare(shared, "master")
	os.MkdirAll(filepath.Join(f.from, "ledgers"), 0o755)
	os.WriteFile(filepath.Join(f.from, ".gc-pending"), nil, 0o644)
	os.WriteFile(filepath.Join(shared, "index.lock"), nil, 0o644)

	project := func(gitDir, name string, shared bool) (*gitEnv, string) {
		wd := filepath.Join(base, "work", name)
		os.MkdirAll(wd, 0o755)
		g := &gitEnv{t: t, gitDir: gitDir, workdir: wd, index: filepath.Join(gitDir, "indexes", projectHash(wd))}
		os.MkdirAll(filepath.Dir(g.index), 0o755)
		ref := "HEAD"
		if shared {
			ref = "refs/hermes/" + projectHash(wd)
			meta := fmt.Sprintf(`{"workdir": %q, "created_at": 1700000000, "last_touch": 1700009999.5}`, wd)
			os.WriteFile(filepath.Join(gitDir, "projects", projectHash(wd)+".json"), []byte(meta), 0o644)
		}
		f.workdirs = append(f.workdirs, wd)
		f.gits[wd], f.refs[wd] = g, ref
		return g, wd
	}

	// Project A in the shared store: exec bits, links, nested and binary
	// files, CRLF text, an LFS pointer, deletions, a gitlink.
	a, awd := project(shared, "alpha", true)
	write(t, awd, map[string]string{"a.txt": "one\n", "bin/run.sh": "#!/bin/sh\necho hi\n", "nested/deep/x.go": "package deep\n",
		"data.bin": "\x00\x01\x02binary", "crlf.txt": "line one\r\nline two\r\n", "shared.txt": "the same in two projects\n",
		"model.bin": "version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 12\n"})
	os.Symlink("a.txt", filepath.Join(awd, "link"))
	a.commit(f.refs[awd], "first checkpoint\n\nbody text")
	write(t, awd, map[string]string{"a.txt": "one\ntwo\n"})
	os.Remove(filepath.Join(awd, "data.bin"))
	a.commit(f.refs[awd], "second: edit and delete")
	a.commit(f.refs[awd], "third: a submodule", "160000,"+strings.Repeat("ab", 20)+",sub")
	// Project B shares a file with A.
	b, bwd := project(shared, "beta", true)
	write(t, bwd, map[string]string{"shared.txt": "the same in two projects\n", "b.md": "# B\n"})
	b.commit(f.refs[bwd], "beta checkpoint")
	// A commit signed under the user's own git settings.
	write(t, bwd, map[string]string{"signed.txt": "made with commit.gpgsign=true\n"})
	b.run("read-tree", f.refs[bwd])
	b.run("add", "-A")
	signed := fmt.Sprintf("tree %s\nparent %s\nauthor hermes <h@example.com> 1700005000 +0000\ncommitter hermes <h@example.com> 1700005000 +0000\n"+
		"gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEEfakefakefakefakefakefakefake=\n =abcd\n -----END PGP SIGNATURE-----\n\nsigned checkpoint\n",
		b.run("write-tree"), b.run("rev-parse", f.refs[bwd]))
	hashCmd := exec.Command("git", "--git-dir", shared, "hash-object", "-t", "commit", "-w", "--stdin")
	hashCmd.Stdin = strings.NewReader(signed)
	hashCmd.Env = []string{"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "PATH=" + os.Getenv("PATH")}
	sum, err := hashCmd.Output()
	if err != nil {
		t.Fatalf("hash-object: %v", err)
	}
	b.run("update-ref", f.refs[bwd], strings.TrimSpace(string(sum)))
	(&gitEnv{t: t, gitDir: shared}).run("gc", "-q") // packed objects, packed-refs

	// A per-directory shadow repository on a branch called trunk, loose.
	shadow := filepath.Join(f.from, "0123456789abcdef")
	initBare(shadow, "trunk")
	c, cwd := project(shadow, "gamma", false)
	os.WriteFile(filepath.Join(shadow, "HERMES_WORKDIR"), []byte(cwd+"\n"), 0o644)
	write(t, cwd, map[string]string{"main.py": "print('hi')\n"})
	c.commit("refs/heads/trunk", "gamma 1")
	write(t, cwd, map[string]string{"main.py": "print('bye')\n", "tool.sh": "#!/bin/sh\n"})
	c.commit("refs/heads/trunk", "gamma 2")
	f.refs[cwd] = "refs/heads/trunk"

	// A shared store moved under legacy-*.
	old := filepath.Join(f.from, "legacy-20250101-000000", "store")
	initBare(old, "master")
	d, dwd := project(old, "delta", true)
	write(t, dwd, map[string]string{"d.txt": "delta\n"})
	d.commit(f.refs[dwd], "delta checkpoint")
	return f
}

// gitView is what git itself says a commit holds: path -> mode and bytes.
func (f *fixture) gitView(t *testing.T, wd, commit string) map[string]string {
	g := &gitEnv{t: t, gitDir: f.gits[wd].gitDir}
	out := map[string]string{}
	for _, line := range strings.Split(g.raw("ls-tree", "-r", "-z", commit), "\x00") {
		if line == "" {
			continue
		}
		meta, path, _ := strings.Cut(line, "\t")
		fields := strings.Fields(meta)
		if fields[0] == "160000" {
			continue // gitlinks have no content to compare
		}
		mode := map[string]string{"100644": "file", "100755": "exec", "120000": "symlink"}[fields[0]]
		out[path] = mode + ":" + g.raw("cat-file", "blob", fields[2])
	}
	return out
}

func (f *fixture) commits(t *testing.T, wd string) []string {
	g := &gitEnv{t: t, gitDir: f.gits[wd].gitDir}
	list := strings.Fields(g.run("rev-list", "--first-parent", f.refs[wd]))
	for i, j := 0, len(list)-1; i < j; i, j = i+1, j-1 {
		list[i], list[j] = list[j], list[i]
	}
	return list
}

// casckptView is what the imported snapshot holds, in the same form.
func casckptView(t *testing.T, s *casckpt.Store, wd, id string) map[string]string {
	ctx := context.Background()
	entries, err := s.Ls(ctx, wd, casckpt.Ref(id))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		if e.Entry.Kind.String() == "dir" {
			continue
		}
		var b bytes.Buffer
		if err := s.Cat(ctx, wd, casckpt.Ref(id), e.Path, &b); err != nil {
			t.Fatal(err)
		}
		mode := "file"
		switch {
		case e.Entry.Kind.String() == "symlink":
			mode = "symlink"
		case e.Entry.Exec:
			mode = "exec"
		}
		out[e.Path] = mode + ":" + b.String()
	}
	return out
}

// treeDigest hashes every file under dir, names, modes and bytes.
func treeDigest(t *testing.T, dir string) string {
	h := sha256.New()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, _ := d.Info()
		fmt.Fprintf(h, "%s %v %d\n", p, info.Mode(), info.Size())
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			h.Write(b)
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))
}

func TestImportMatchesGitWithoutGit(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	store, err := casckpt.Open(filepath.Join(t.TempDir(), "store"), casckpt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// git's own view, while git is still on PATH.
	want := map[string][]map[string]string{}
	for _, wd := range f.workdirs {
		for _, c := range f.commits(t, wd) {
			want[wd] = append(want[wd], f.gitView(t, wd, c))
		}
	}
	before := treeDigest(t, f.from)
	legacy, err := Status(ctx, store, f.from)
	if err != nil || len(legacy) != 3 {
		t.Fatalf("status before: %+v %v", legacy, err)
	}
	for _, l := range legacy {
		if l.Migrated || l.SizeBytes == 0 {
			t.Fatalf("before the import: %+v", l)
		}
	}

	t.Setenv("PATH", t.TempDir()) // no git from here on
	if _, err := exec.LookPath("git"); err == nil {
		t.Fatal("git is still reachable")
	}
	rep, err := Run(ctx, store, f.from, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Projects != 4 || rep.SnapshotsImported != 8 || rep.SnapshotsSkipped != 0 || len(rep.Errors) != 0 || rep.GitlinksSkipped != 1 {
		t.Fatalf("report: %+v", rep)
	}
	for _, wd := range f.workdirs {
		list, err := store.List(ctx, wd, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != len(want[wd]) {
			t.Fatalf("%s: %d snapshots, git has %d commits", wd, len(list), len(want[wd]))
		}
		for i := range list {
			snap := list[len(list)-1-i] // oldest first
			got := casckptView(t, store, wd, snap.ID.String())
			if len(got) != len(want[wd][i]) {
				t.Fatalf("%s commit %d: %d entries, git has %d\n%v\n%v", wd, i, len(got), len(want[wd][i]), got, want[wd][i])
			}
			for p, w := range want[wd][i] {
				if got[p] != w {
					t.Fatalf("%s commit %d: %s is %q, git has %q", wd, i, p, got[p], w)
				}
			}
		}
		if strings.HasSuffix(wd, "alpha") && list[len(list)-1].Reason != "first checkpoint" {
			t.Fatalf("reason is %q, want the message's first line", list[len(list)-1].Reason)
		}
	}
	if treeDigest(t, f.from) != before {
		t.Fatal("the import changed the legacy store")
	}
	again, err := Run(ctx, store, f.from, Options{})
	if err != nil || again.SnapshotsImported != 0 || again.SnapshotsSkipped != 8 {
		t.Fatalf("second run: %+v %v", again, err)
	}
	legacy, _ = Status(ctx, store, f.from)
	for _, l := range legacy {
		if !l.Migrated {
			t.Fatalf("after the import: %+v", l)
		}
	}
	if v, err := store.Verify(ctx); err != nil || len(v.Damaged) != 0 {
		t.Fatalf("verify: %+v %v", v, err)
	}
}

func TestClearLegacyKeepsWhatIsNotImported(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	store, _ := casckpt.Open(filepath.Join(t.TempDir(), "store"), casckpt.Options{})
	if _, err := Run(ctx, store, f.from, Options{}); err != nil {
		t.Fatal(err)
	}
	// A new checkpoint in the shadow repository after the import.
	var gamma string
	for _, wd := range f.workdirs {
		if strings.HasSuffix(wd, "gamma") {
			gamma = wd
		}
	}
	write(t, gamma, map[string]string{"late.txt": "after the import\n"})
	f.gits[gamma].commit(f.refs[gamma], "gamma 3")

	deleted, kept, freed, err := ClearLegacy(ctx, store, f.from, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != 1 || !strings.HasSuffix(kept[0], "0123456789abcdef") || len(deleted) != 2 || freed == 0 {
		t.Fatalf("deleted %v kept %v freed %d", deleted, kept, freed)
	}
	for _, d := range deleted {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Fatalf("%s still exists", d)
		}
	}
	if _, err := os.Stat(kept[0]); err != nil {
		t.Fatal("the store not fully imported was deleted")
	}
}
