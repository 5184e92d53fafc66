package hermes

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/migrate/gitimport/gittest"
)

// The fixture is a Hermes checkpoints directory built once, with the git
// program, by TestMain; each test works on a copy of it. Layout:
//
//	checkpoints/
//	  .last_prune .gc-pending ledgers/        junk
//	  store/                shared store: packed by git gc (deltas, packed-refs), then loose
//	                        commits on top; projects alpha, beta, pruned; junk files
//	  0123456789abcdef/     shadow repository, bare layout, loose objects only, branch
//	                        trunk, core.autocrlf=true, an LFS pointer (project gamma)
//	  fedcba9876543210/     shadow repository with a .git subdirectory, packed, branch
//	                        main (project delta)
//	  legacy-20250101-000000/
//	    store/              shared store, loose only (project epsilon)
//	    <hash of beta>/     shadow repository of beta's older history, packed, branch master
//	    0123456789abcdef/   a copy of gamma's repository
//	    ledgers/ .gc-pending
type fixture struct {
	base string // holds checkpoints/ and work/
	from string
	// want lists each project's commits as git sees them, oldest first,
	// in the order the import must record them.
	want map[string][]gitCommit
	// total counts the commits in all repositories (the copy included).
	total int
	// unique counts distinct (workdir, commit) pairs.
	unique             int
	gitlinks, badNames int // summed over the unique commits
	workdirs           map[string]string
	units              []string // unit names, sorted
}

// gitCommit is git's own view of a commit.
type gitCommit struct {
	hash   string
	author int64
	reason string
	files  map[string]gittest.File // kept entries by path
	dirs   map[string]bool
}

var fx *fixture

func TestMain(m *testing.M) {
	var cleanup func()
	if _, err := exec.LookPath("git"); err == nil {
		cleanup = buildFixture()
	}
	code := m.Run()
	if cleanup != nil {
		cleanup()
	}
	os.Exit(code)
}

// getFixture returns a fresh copy of the fixture's checkpoints directory,
// skipping the test when git is missing.
func getFixture(t *testing.T) (*fixture, string) {
	t.Helper()
	if fx == nil {
		t.Skip("the git program is needed to build the legacy stores")
	}
	dst := filepath.Join(t.TempDir(), "checkpoints")
	if err := copyDir(fx.from, dst); err != nil {
		t.Fatal(err)
	}
	return fx, dst
}

// builder runs git to make legacy stores as Hermes did.
type builder struct {
	home  string
	clock int64 // seconds; every commit gets a later time
}

func (b *builder) fail(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}

// git runs git with a clean configuration; gitDir, workTree and index may
// be empty. It returns stdout, trimmed.
func (b *builder) git(gitDir, workTree, index, stdin string, env []string, args ...string) string {
	return strings.TrimSpace(b.gitRaw(gitDir, workTree, index, stdin, env, args...))
}

func (b *builder) gitRaw(gitDir, workTree, index, stdin string, env []string, args ...string) string {
	out, err := b.gitTry(gitDir, workTree, index, stdin, env, args...)
	if err != nil {
		b.fail("git %v: %v", args, err)
	}
	return out
}

// gitTry runs git and returns its output, or an error with its stderr.
func (b *builder) gitTry(gitDir, workTree, index, stdin string, env []string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	when := fmt.Sprintf("@%d +0000", b.clock)
	cmd.Env = append([]string{
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + b.home, "PATH=" + os.Getenv("PATH"),
		"GIT_AUTHOR_NAME=Hermes Checkpoint", "GIT_AUTHOR_EMAIL=hermes@local",
		"GIT_COMMITTER_NAME=Hermes Checkpoint", "GIT_COMMITTER_EMAIL=hermes@local",
		"GIT_AUTHOR_DATE=" + when, "GIT_COMMITTER_DATE=" + when,
	}, env...)
	if gitDir != "" {
		cmd.Env = append(cmd.Env, "GIT_DIR="+gitDir)
	}
	if workTree != "" {
		cmd.Env = append(cmd.Env, "GIT_WORK_TREE="+workTree)
		cmd.Dir = workTree
	}
	if index != "" {
		cmd.Env = append(cmd.Env, "GIT_INDEX_FILE="+index)
	}
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%w: %s", err, errb.String())
	}
	return out.String(), nil
}

func (b *builder) tick() { b.clock += 60 }

func projectHash(workdir string) string {
	sum := sha256.Sum256([]byte(workdir))
	return hex.EncodeToString(sum[:])[:16]
}

// hermesCommit records the work tree on the project's refs/hermes ref, as
// the shared store does (plumbing, per-project index). extra are
// update-index --cacheinfo arguments added on top.
func (b *builder) hermesCommit(store, wd, msg string, extra ...string) string {
	b.tick()
	ref := "refs/hermes/" + projectHash(wd)
	index := filepath.Join(store, "indexes", projectHash(wd))
	prev, err := b.gitTry(store, "", "", "", nil, "rev-parse", "--verify", "-q", ref)
	if err != nil {
		prev = "" // the project's first commit
	}
	prev = strings.TrimSpace(prev)
	if prev != "" {
		b.git(store, wd, index, "", nil, "read-tree", prev)
	} else {
		b.git(store, wd, index, "", nil, "read-tree", "--empty")
	}
	b.git(store, wd, index, "", nil, "add", "-A")
	for _, ci := range extra {
		b.git(store, wd, index, "", nil, "update-index", "--add", "--cacheinfo", ci)
	}
	tree := b.git(store, wd, index, "", nil, "write-tree")
	args := []string{"commit-tree", tree, "-m", msg}
	if prev != "" {
		args = append(args, "-p", prev)
	}
	c := b.git(store, wd, index, "", nil, args...)
	b.git(store, "", "", "", nil, "update-ref", ref, c)
	return c
}

// shadowCommit commits the work tree with porcelain git on the current
// branch, as the per-directory shadow repositories did, under cfg (the
// user's own settings).
func (b *builder) shadowCommit(gitDir, wd, msg string, cfg ...string) {
	b.tick()
	var args []string
	for _, c := range cfg {
		args = append(args, "-c", c)
	}
	b.git(gitDir, wd, "", "", nil, append(args, "add", "-A")...)
	b.git(gitDir, wd, "", "", nil, append(args, "commit", "-q", "--allow-empty", "-m", msg)...)
}

// initShadow makes a repository whose git directory is dir, as the
// per-directory shadow repositories were made (GIT_DIR=dir git init).
func (b *builder) initShadow(dir, branch string) {
	must(os.MkdirAll(dir, 0o755))
	if branch == "" {
		b.git(dir, "", "", "", nil, "init", "-q")
	} else {
		b.git(dir, "", "", "", nil, "init", "-q", "-b", branch)
	}
}

// initShared makes a shared store as Hermes does, with its junk.
func (b *builder) initShared(dir string) {
	b.git("", "", "", "", nil, "init", "-q", "--bare", dir)
	b.git(dir, "", "", "", nil, "config", "gc.auto", "0")
	for _, d := range []string{"indexes", "projects", "info", "ledgers"} {
		must(os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	must(os.WriteFile(filepath.Join(dir, "info", "exclude"), []byte("node_modules/\n*.log\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "ledgers", "0000000000000000.json"), []byte(`{"/x": {"sha256": "00", "ts": 1}}`), 0o644))
}

// register writes a shared store's project record.
func register(store, wd string) {
	rec := fmt.Sprintf(`{"workdir": %q, "created_at": 1700000000.25, "last_touch": 1900000000.5, "workdir_parent_dev": 2049}`, wd)
	must(os.WriteFile(filepath.Join(store, "projects", projectHash(wd)+".json"), []byte("\xef\xbb\xbf"+rec), 0o644))
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// files writes files under dir: exec if the name ends in .sh; a value
// starting with "->" makes a symbolic link; "" removes the path.
func files(dir string, fs map[string]string) {
	for p, data := range fs {
		full := filepath.Join(dir, filepath.FromSlash(p))
		os.RemoveAll(full)
		if data == "" {
			continue
		}
		must(os.MkdirAll(filepath.Dir(full), 0o755))
		if target, ok := strings.CutPrefix(data, "->"); ok {
			must(os.Symlink(target, full))
			continue
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") {
			mode = 0o755
		}
		must(os.WriteFile(full, []byte(data), mode))
		must(os.Chmod(full, mode))
	}
}

func randomText(rng *rand.Rand, lines int) string {
	var sb strings.Builder
	for i := range lines {
		fmt.Fprintf(&sb, "line %d: %x\n", i, rng.Uint64())
	}
	return sb.String()
}

func randomBytes(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return string(b)
}

// buildFixture builds fx and returns its cleanup.
func buildFixture() (cleanup func()) {
	base, err := os.MkdirTemp("", "migrate-fixture-")
	must(err)
	cleanup = func() { os.RemoveAll(base) }
	defer func() {
		if r := recover(); r != nil {
			cleanup()
			fmt.Fprintln(os.Stderr, "building the legacy fixture:", r)
			os.Exit(1)
		}
	}()
	h := newHermesDir(base)
	h.oldBetaRepo()
	h.sharedStore()
	h.gammaRepo()
	h.deltaRepo()
	h.archivedStore()
	fx = h.fixture()
	return cleanup
}

// hermesDir builds the fixture's checkpoints directory, one repository per
// step. The steps must run in the order buildFixture calls them: each
// commit takes the next time on the builder's clock, and the random
// contents come from one seeded source. Each step records where its
// repository is, for fixture to read the histories back.
type hermesDir struct {
	*builder
	base, from, legacy string
	wd                 map[string]string // project name: workdir
	rng                *rand.Rand
	// The repositories, as the steps make them.
	oldBeta, store, prunedRef, gamma, deltaGit, oldStore string
}

// newHermesDir makes the project workdirs under base/work and the
// checkpoints directory's own junk under base/checkpoints.
func newHermesDir(base string) *hermesDir {
	h := &hermesDir{builder: &builder{home: base, clock: 1_700_000_000}, base: base,
		from: filepath.Join(base, "checkpoints"), wd: map[string]string{}, rng: rand.New(rand.NewPCG(1, 2))}
	work := filepath.Join(base, "work")
	for _, name := range []string{"alpha", "beta", "pruned", "gamma", "delta", "epsilon"} {
		h.wd[name] = filepath.Join(work, name)
		must(os.MkdirAll(h.wd[name], 0o755))
	}
	must(os.MkdirAll(filepath.Join(h.from, "ledgers"), 0o755))
	must(os.WriteFile(filepath.Join(h.from, ".last_prune"), []byte("1700000000"), 0o644))
	must(os.WriteFile(filepath.Join(h.from, ".gc-pending"), nil, 0o644))
	h.legacy = filepath.Join(h.from, "legacy-20250101-000000")
	return h
}

// oldBetaRepo makes beta's older history, in a pre-v2 shadow repository
// (bare layout), archived under legacy-*, then packed.
func (h *hermesDir) oldBetaRepo() {
	wd := h.wd
	h.oldBeta = filepath.Join(h.legacy, projectHash(wd["beta"]))
	h.initShadow(h.oldBeta, "master")
	must(os.WriteFile(filepath.Join(h.oldBeta, "HERMES_WORKDIR"), []byte(wd["beta"]+"\n"), 0o644))
	files(wd["beta"], map[string]string{"b.md": "# B, first draft\n", "shared.txt": "the same in two projects\n"})
	h.shadowCommit(h.oldBeta, wd["beta"], "beta before the shared store")
	files(wd["beta"], map[string]string{"b.md": "# B\n"})
	h.shadowCommit(h.oldBeta, wd["beta"], "beta: edit")
	h.git(h.oldBeta, "", "", "", nil, "gc", "-q")
}

// sharedStore makes the shared store with its junk and the projects alpha,
// beta and pruned, packs it with git gc, and adds a loose commit on top.
func (h *hermesDir) sharedStore() {
	wd := h.wd
	h.store = filepath.Join(h.from, "store")
	store := h.store
	h.initShared(store)
	must(os.WriteFile(filepath.Join(store, ".gc-pending"), nil, 0o644))
	must(os.WriteFile(filepath.Join(store, "index.lock"), nil, 0o644))
	for _, p := range []string{"alpha", "beta", "pruned"} {
		register(store, wd[p])
	}
	big := h.alphaHistory()
	h.betaHistory()
	h.prunedHistory()

	h.git(store, "", "", "", nil, "gc", "-q") // packed objects with deltas, packed-refs
	must(os.MkdirAll(filepath.Join(store, "refs", "heads"), 0o755))
	must(os.MkdirAll(filepath.Join(store, "branches"), 0o755))
	// Loose commits over the pack: alpha's ref is loose again.
	files(wd["alpha"], map[string]string{"a.txt": "one\ntwo\nthree\n", "big.txt": strings.Replace(big, "line 7:", "line 7 (edited):", 1)})
	h.hermesCommit(store, wd["alpha"], "fifth: after gc")
}

// alphaHistory commits alpha's first four checkpoints to the shared store:
// every kind of entry, then edits, deletions, submodules, a name too long
// to keep, an empty link target, a renamed executable and a retargeted
// link. It returns the large text file, which a later commit edits.
func (h *hermesDir) alphaHistory() (big string) {
	wd, store := h.wd, h.store
	big = randomText(h.rng, 800)
	files(wd["alpha"], map[string]string{
		"a.txt": "one\n", "bin/run.sh": "#!/bin/sh\necho hi\n", "nested/deep/er/x.go": "package er\n",
		"data.bin": "\x00\x01\x02binary\xff", "crlf.txt": "line one\r\nline two\r\n", "shared.txt": "the same in two projects\n",
		"model.safetensors": "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n",
		"big.txt":           big, "assets/blob.bin": randomBytes(h.rng, 1_500_000), "link": "->a.txt", "dirlink": "->nested/deep",
		"node_modules/dep/index.js": "module.exports = 1\n", ".env": "SECRET=not-excluded-by-migrate\n",
	})
	must(os.WriteFile(filepath.Join(wd["alpha"], "empty.txt"), nil, 0o644))
	h.hermesCommit(store, wd["alpha"], "first checkpoint\n\nbody text")
	emptyBlob := h.git(store, "", "", "", nil, "hash-object", "-w", "--stdin")
	longBlob := h.git(store, "", "", "long name\n", nil, "hash-object", "-w", "--stdin")
	files(wd["alpha"], map[string]string{"a.txt": "one\ntwo\n", "data.bin": "", "big.txt": strings.Replace(big, "line 400:", "line 400 (edited):", 1)})
	h.hermesCommit(store, wd["alpha"], "second: edit and delete")
	h.hermesCommit(store, wd["alpha"], "third: a submodule, a long name, an empty link",
		"160000,"+strings.Repeat("ab", 20)+",sub", "160000,"+strings.Repeat("cd", 20)+",deps/only/sub",
		"100644,"+longBlob+",names/"+strings.Repeat("n", 300), "120000,"+emptyBlob+",emptylink")
	files(wd["alpha"], map[string]string{"bin/run.sh": "", "bin/tool.sh": "#!/bin/sh\nexit 0\n", "link": "->bin/tool.sh"})
	h.hermesCommit(store, wd["alpha"], "fourth: exec file renamed, link retargeted")
	return big
}

// betaHistory continues beta's history in the shared store: a checkpoint,
// then a commit signed under the user's own git settings.
func (h *hermesDir) betaHistory() {
	wd, store := h.wd, h.store
	files(wd["beta"], map[string]string{"b.md": "# B, in the shared store\n", "src/main.py": "print('beta')\n"})
	h.hermesCommit(store, wd["beta"], "beta checkpoint")
	files(wd["beta"], map[string]string{"signed.txt": "made with commit.gpgsign=true\n"})
	h.tick()
	betaRef := "refs/hermes/" + projectHash(wd["beta"])
	betaIndex := filepath.Join(store, "indexes", projectHash(wd["beta"]))
	h.git(store, wd["beta"], betaIndex, "", nil, "read-tree", betaRef)
	h.git(store, wd["beta"], betaIndex, "", nil, "add", "-A")
	signed := fmt.Sprintf("tree %s\nparent %s\nauthor Hermes Checkpoint <hermes@local> %d +0200\ncommitter Hermes Checkpoint <hermes@local> %d +0200\n"+
		"gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEEfakefakefakefakefakefakefake=\n =abcd\n -----END PGP SIGNATURE-----\n\nsigned checkpoint\n",
		h.git(store, wd["beta"], betaIndex, "", nil, "write-tree"), h.git(store, "", "", "", nil, "rev-parse", betaRef), h.clock, h.clock)
	h.git(store, "", "", "", nil, "update-ref", betaRef, h.git(store, "", "", signed, nil, "hash-object", "-t", "commit", "-w", "--stdin"))
}

// prunedHistory makes a history pruned by rewriting in the shared store:
// the kept commits keep their author time and message but carry the
// prune's time as committer time; one more checkpoint follows.
func (h *hermesDir) prunedHistory() {
	wd, store := h.wd, h.store
	for i := range 4 {
		files(wd["pruned"], map[string]string{"p.txt": fmt.Sprintf("version %d\n", i), fmt.Sprintf("f%d.txt", i): "x\n"})
		h.hermesCommit(store, wd["pruned"], fmt.Sprintf("pruned %d", i))
	}
	h.prunedRef = "refs/hermes/" + projectHash(wd["pruned"])
	h.tick()
	pruneTime := h.clock
	parent := ""
	for _, c := range strings.Fields(h.git(store, "", "", "", nil, "rev-list", "--reverse", h.prunedRef))[2:] {
		meta := strings.SplitN(h.git(store, "", "", "", nil, "log", "-1", "--format=%T%x00%at%x00%s", c), "\x00", 3)
		args := []string{"commit-tree", meta[0], "-m", meta[2]}
		if parent != "" {
			args = append(args, "-p", parent)
		}
		parent = h.git(store, "", "", "", []string{"GIT_AUTHOR_DATE=@" + meta[1] + " +0000", "GIT_COMMITTER_DATE=@" + strconv.FormatInt(pruneTime, 10) + " +0000"}, args...)
	}
	h.git(store, "", "", "", nil, "update-ref", h.prunedRef, parent)
	files(wd["pruned"], map[string]string{"p.txt": "after the prune\n"})
	h.hermesCommit(store, wd["pruned"], "pruned: after the prune")
}

// gammaRepo makes gamma: a pre-v2 shadow repository, loose only, on branch
// trunk, made under the user's settings (autocrlf, an LFS attribute).
func (h *hermesDir) gammaRepo() {
	wd := h.wd
	h.gamma = filepath.Join(h.from, "0123456789abcdef")
	gamma := h.gamma
	h.initShadow(gamma, "trunk")
	h.git(gamma, "", "", "", nil, "config", "core.autocrlf", "true")
	must(os.WriteFile(filepath.Join(gamma, "HERMES_WORKDIR"), []byte(wd["gamma"]), 0o644))
	files(wd["gamma"], map[string]string{"main.py": "print('hi')\r\nprint('crlf')\r\n", ".gitattributes": "*.psd filter=lfs diff=lfs merge=lfs -text\n",
		"art.psd": "version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 99\n", "large.bin": randomBytes(h.rng, 1_200_000)})
	h.shadowCommit(gamma, wd["gamma"], "gamma 1", "user.name=Someone Else", "user.email=u@example.com")
	files(wd["gamma"], map[string]string{"main.py": "print('bye')\r\n", "tool.sh": "#!/bin/sh\r\n", "large.bin": ""})
	h.shadowCommit(gamma, wd["gamma"], "gamma 2")
	h.shadowCommit(gamma, wd["gamma"], "  \n\ngamma 3: empty commit, message after blank lines\r\nsecond line")
}

// deltaRepo makes delta: a shadow repository kept in a .git subdirectory,
// branch main, packed.
func (h *hermesDir) deltaRepo() {
	wd := h.wd
	deltaDir := filepath.Join(h.from, "fedcba9876543210")
	h.deltaGit = filepath.Join(deltaDir, ".git")
	h.initShadow(h.deltaGit, "main")
	must(os.WriteFile(filepath.Join(deltaDir, "HERMES_WORKDIR"), []byte(wd["delta"]+"\n"), 0o644))
	files(wd["delta"], map[string]string{"x/y/z.txt": "deep\n", "run.sh": "#!/bin/sh\n", "gone.txt": "soon gone\n"})
	h.shadowCommit(h.deltaGit, wd["delta"], "delta 1")
	files(wd["delta"], map[string]string{"gone.txt": "", "x/y/z.txt": "deeper\n"})
	h.shadowCommit(h.deltaGit, wd["delta"], "delta 2")
	h.git(h.deltaGit, "", "", "", nil, "gc", "-q")
}

// archivedStore fills legacy-*: an archived shared store, loose only
// (project epsilon), a copy of gamma's repository, and junk.
func (h *hermesDir) archivedStore() {
	wd := h.wd
	h.oldStore = filepath.Join(h.legacy, "store")
	h.initShared(h.oldStore)
	register(h.oldStore, wd["epsilon"])
	files(wd["epsilon"], map[string]string{"e.txt": "epsilon\n"})
	h.hermesCommit(h.oldStore, wd["epsilon"], "epsilon 1")
	files(wd["epsilon"], map[string]string{"e.txt": "epsilon\nagain\n", "bin/e.sh": "#!/bin/sh\n"})
	h.hermesCommit(h.oldStore, wd["epsilon"], "epsilon 2")
	must(copyDir(h.gamma, filepath.Join(h.legacy, "0123456789abcdef")))
	must(os.MkdirAll(filepath.Join(h.legacy, "ledgers"), 0o755))
	must(os.WriteFile(filepath.Join(h.legacy, ".gc-pending"), nil, 0o644))
}

// fixture reads every history back with git: what the import must
// produce, per project in the order it must record them, and the counts.
func (h *hermesDir) fixture() *fixture {
	wd := h.wd
	f := &fixture{base: h.base, from: h.from, want: map[string][]gitCommit{}, workdirs: wd,
		units: []string{"0123456789abcdef", "fedcba9876543210", "legacy-20250101-000000", "store"}}
	histories := []struct {
		project, gitDir, ref string
		copies               int
	}{
		{"beta", h.oldBeta, "HEAD", 1}, // older history first
		{"beta", h.store, "refs/hermes/" + projectHash(wd["beta"]), 1},
		{"alpha", h.store, "refs/hermes/" + projectHash(wd["alpha"]), 1},
		{"pruned", h.store, h.prunedRef, 1},
		{"gamma", h.gamma, "HEAD", 2},
		{"delta", h.deltaGit, "HEAD", 1},
		{"epsilon", h.oldStore, "refs/hermes/" + projectHash(wd["epsilon"]), 1},
	}
	blobs := map[string]string{}
	for _, hist := range histories {
		for _, c := range strings.Fields(h.git(hist.gitDir, "", "", "", nil, "rev-list", "--reverse", "--first-parent", hist.ref)) {
			gc := h.view(hist.gitDir, c, blobs, f)
			f.want[wd[hist.project]] = append(f.want[wd[hist.project]], gc)
			f.total += hist.copies
			f.unique++
		}
	}
	return f
}

// view reads a commit with git: its author time, subject line and the
// entries the import must produce (the documented omissions applied).
func (b *builder) view(gitDir, c string, blobs map[string]string, f *fixture) gitCommit {
	meta := strings.SplitN(b.git(gitDir, "", "", "", nil, "log", "-1", "--format=%at%x00%B", c), "\x00", 2)
	author, err := strconv.ParseInt(meta[0], 10, 64)
	must(err)
	reason, _, _ := strings.Cut(strings.TrimLeft(meta[1], " \t\r\n"), "\n")
	gc := gitCommit{hash: c, author: author, reason: strings.TrimRight(reason, " \t\r"), files: map[string]gittest.File{}, dirs: map[string]bool{}}
	for _, line := range strings.Split(b.gitRaw(gitDir, "", "", "", nil, "ls-tree", "-r", "-z", "--full-tree", c), "\x00") {
		if line == "" {
			continue
		}
		info, p, _ := strings.Cut(line, "\t")
		fields := strings.Fields(info) // mode type hash
		mode, hash := fields[0], fields[2]
		if mode == "160000" {
			f.gitlinks++
			continue
		}
		if slices.ContainsFunc(strings.Split(p, "/"), func(s string) bool { return len(s) > 255 }) {
			f.badNames++
			continue
		}
		data, ok := blobs[hash]
		if !ok {
			data = b.gitRaw(gitDir, "", "", "", nil, "cat-file", "blob", hash)
			blobs[hash] = data
		}
		kind := map[string]string{"100644": "file", "100755": "exec", "120000": "symlink"}[mode]
		if kind == "" {
			b.fail("unexpected mode %s", mode)
		}
		if kind == "symlink" && data == "" {
			f.badNames++
			continue
		}
		gc.files[p] = gittest.File{Kind: kind, Data: data}
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			gc.dirs[d] = true
		}
	}
	return gc
}

// copyDir copies a directory tree: files with their modes, links, dirs.
func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, info.Mode().Perm())
		}
	})
}
