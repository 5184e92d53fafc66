//go:build linux

package bench

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// defaultExcludes is the contract's default exclude list, as git patterns.
var defaultExcludes = strings.Fields(`node_modules/ dist/ build/ target/ out/ .next/ .nuxt/
__pycache__/ *.pyc *.pyo .cache/ .pytest_cache/ .mypy_cache/ .ruff_cache/ coverage/ .coverage
.venv/ venv/ env/ .git/ .hg/ .svn/ .worktrees/ *.so *.dylib *.dll *.o *.a *.jar *.class *.exe
*.obj *.mp4 *.mov *.mkv *.webm *.zip *.tar *.tar.gz *.tgz *.7z *.rar *.iso .env .env.*
.DS_Store Thumbs.db *.log`)

// gitShadow is the Hermes git shadow store, done as PERF.md describes: one
// bare repository for every project, a ref and an index file per project,
// and past the keep limit a rewrite of the newest commits followed by
// reflog expiry and gc --prune=now, on every snapshot.
type gitShadow struct {
	tb    testing.TB
	store string
	// procMeter counts every git process run: CPU time and the largest
	// resident size (maxRSS, KiB).
	procMeter
}

func newGitShadow(tb testing.TB, store string) *gitShadow {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("git is not installed: the git shadow peer cannot run")
	}
	g := &gitShadow{tb: tb, store: store}
	g.must("", "init", "--bare", "-q", store)
	g.must("", "config", "gc.auto", "0")
	g.must("", "config", "commit.gpgsign", "false")
	os.MkdirAll(filepath.Join(store, "info"), 0o755)
	os.MkdirAll(filepath.Join(store, "indexes"), 0o755)
	if err := os.WriteFile(filepath.Join(store, "info", "exclude"), []byte(strings.Join(defaultExcludes, "\n")+"\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	return g
}

func projectHash(workdir string) string {
	sum := sha256.Sum256([]byte(workdir))
	return hex.EncodeToString(sum[:])[:16]
}

func (g *gitShadow) ref(workdir string) string { return "refs/hermes/" + projectHash(workdir) }

func (g *gitShadow) env(workdir string) []string {
	env := []string{
		"GIT_DIR=" + g.store, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=hermes", "GIT_AUTHOR_EMAIL=hermes@localhost",
		"GIT_COMMITTER_NAME=hermes", "GIT_COMMITTER_EMAIL=hermes@localhost",
		"HOME=" + g.store, "PATH=" + os.Getenv("PATH"),
	}
	if workdir != "" {
		env = append(env, "GIT_WORK_TREE="+workdir, "GIT_INDEX_FILE="+filepath.Join(g.store, "indexes", projectHash(workdir)))
	}
	return env
}

// run runs git for a project ("" for the store alone).
func (g *gitShadow) run(workdir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Env = g.env(workdir)
	if workdir != "" {
		cmd.Dir = workdir
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := g.procMeter.run(g.tb, cmd)
	if err != nil {
		return out.String(), fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return strings.TrimSpace(out.String()), nil
}

func (g *gitShadow) must(workdir string, args ...string) string {
	g.tb.Helper()
	out, err := g.run(workdir, args...)
	if err != nil {
		g.tb.Fatal(err)
	}
	return out
}

// Snapshot records workdir unless unchanged; past keep commits it rewrites
// the chain and collects garbage, as Hermes does.
func (g *gitShadow) Snapshot(workdir, reason string, keep int) bool {
	g.tb.Helper()
	ref := g.ref(workdir)
	prev, err := g.run(workdir, "rev-parse", "--verify", "-q", ref)
	if err != nil {
		prev = ""
	}
	if prev != "" {
		g.must(workdir, "read-tree", prev)
	} else {
		g.must(workdir, "read-tree", "--empty")
	}
	g.must(workdir, "add", "-A")
	if prev != "" {
		if _, err := g.run(workdir, "diff-index", "--cached", "--quiet", prev); err == nil {
			return false
		}
	}
	tree := g.must(workdir, "write-tree")
	args := []string{"commit-tree", tree, "-m", reason}
	if prev != "" {
		args = append(args, "-p", prev)
	}
	commit := g.must(workdir, args...)
	g.must(workdir, "update-ref", ref, commit)
	if keep > 0 && len(g.Commits(workdir)) > keep {
		g.rewrite(workdir, keep)
		g.collect()
	}
	return true
}

// rewrite keeps only the newest keep commits of a project, as a new chain.
func (g *gitShadow) rewrite(workdir string, keep int) {
	commits := g.Commits(workdir)
	if len(commits) > keep {
		commits = commits[:keep]
	}
	parent := ""
	for i := len(commits) - 1; i >= 0; i-- {
		msg := g.must(workdir, "log", "-1", "--format=%B", commits[i])
		args := []string{"commit-tree", commits[i] + "^{tree}", "-m", msg}
		if parent != "" {
			args = append(args, "-p", parent)
		}
		parent = g.must(workdir, args...)
	}
	if parent == "" {
		g.must(workdir, "update-ref", "-d", g.ref(workdir))
		return
	}
	g.must(workdir, "update-ref", g.ref(workdir), parent)
}

func (g *gitShadow) collect() {
	g.must("", "reflog", "expire", "--expire=now", "--all")
	g.must("", "gc", "--prune=now", "-q")
}

// Commits lists a project's commits, newest first.
func (g *gitShadow) Commits(workdir string) []string {
	out, err := g.run(workdir, "rev-list", g.ref(workdir))
	if err != nil || out == "" {
		return nil
	}
	return strings.Fields(out)
}

// Restore checks a commit out over the working tree, as Hermes does (files
// created since are left behind).
func (g *gitShadow) Restore(workdir, commit string) {
	g.tb.Helper()
	g.must(workdir, "checkout", commit, "--", ".")
}

// PruneToCap drops the oldest commit of each project, round robin, never a
// project's last one, collecting after each round, until the store's
// allocated size fits capBytes.
func (g *gitShadow) PruneToCap(projects []string, capBytes int64) {
	for {
		if alloc, _ := duBytes(g.store); alloc <= capBytes {
			return
		}
		dropped := false
		for _, p := range projects {
			if n := len(g.Commits(p)); n > 1 {
				g.rewrite(p, n-1)
				dropped = true
			}
		}
		g.collect()
		if !dropped {
			return
		}
	}
}

func TestGitShadowPeer(t *testing.T) {
	g := newGitShadow(t, filepath.Join(t.TempDir(), "store"))
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one"), 0o644)
	os.WriteFile(filepath.Join(dir, ".env"), []byte("SECRET"), 0o644)
	if !g.Snapshot(dir, "first", 2) {
		t.Fatal("first snapshot not taken")
	}
	if g.Snapshot(dir, "again", 2) {
		t.Fatal("unchanged tree snapshotted")
	}
	for i := range 3 {
		os.WriteFile(filepath.Join(dir, "a.txt"), []byte(fmt.Sprint("v", i)), 0o644)
		g.Snapshot(dir, "edit", 2)
	}
	commits := g.Commits(dir)
	if len(commits) != 2 {
		t.Fatalf("keep 2 left %d commits", len(commits))
	}
	g.Restore(dir, commits[1])
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "v1" {
		t.Fatalf("restore gave %q", b)
	}
	if out := g.must(dir, "ls-tree", "-r", "--name-only", commits[0]); strings.Contains(out, ".env") {
		t.Fatal("the default excludes were not applied")
	}
}
