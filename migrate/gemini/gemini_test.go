package gemini

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/migrate/gitimport"
	"github.com/casckpt/casckpt/migrate/gitimport/gittest"
)

// history makes a project's shadow repository in repoDir as Gemini CLI's
// GitService does (google-gemini/gemini-cli
// packages/core/src/services/gitService.ts): setupShadowGitRepository
// writes repoDir/.gitconfig (user Gemini CLI <gemini-cli@google.com>,
// commit.gpgsign false), runs "git init --initial-branch main" and "git
// commit -m 'Initial commit' --allow-empty" in repoDir, and writes the
// project's .gitignore there; it returns a func that is
// createFileSnapshot: "git add ." and "git commit -m msg" in the project
// with GIT_DIR, GIT_WORK_TREE, HOME and XDG_CONFIG_HOME set as it sets
// them. (The initial commit runs with HOME=repoDir too, for its identity.)
func history(t *testing.T, g *gittest.Git, repoDir, wd string) func(msg string) string {
	gittest.WriteFiles(t, repoDir, map[string]string{".gitconfig": "[user]\n  name = Gemini CLI\n  email = gemini-cli@google.com\n[commit]\n  gpgsign = false\n"})
	home := []string{"GIT_CONFIG_GLOBAL=" + filepath.Join(repoDir, ".gitconfig"), "HOME=" + repoDir, "XDG_CONFIG_HOME=" + repoDir}
	g.Run(repoDir, home, "init", "--initial-branch", "main")
	g.Run(repoDir, home, "commit", "-m", "Initial commit", "--allow-empty")
	gittest.WriteFiles(t, repoDir, map[string]string{".gitignore": ""})
	env := append([]string{"GIT_DIR=" + filepath.Join(repoDir, ".git"), "GIT_WORK_TREE=" + wd}, home...)
	return func(msg string) string {
		g.Tick()
		g.Run(wd, env, "add", ".")
		g.Run(wd, env, "commit", "-m", msg)
		return g.Run(wd, env, "rev-parse", "HEAD")
	}
}

// TestImportGeminiWithoutGit imports Gemini CLI's shadow repositories, one
// named by a slug with its .project_root and an older one named by the
// SHA-256 of its path (found through projects.json), with git hidden:
// every changed commit is a snapshot with its bytes, modes and links,
// labelled gemini:<slug> and the commit's time in milliseconds; the turn
// undoes; a second run imports nothing; the source is unchanged;
// clear-legacy deletes the repositories.
func TestImportGeminiWithoutGit(t *testing.T) {
	ctx := context.Background()
	g := gittest.NewGit(t)
	dir := filepath.Join(t.TempDir(), ".gemini")
	wd := filepath.Join(t.TempDir(), "app")
	old := filepath.Join(t.TempDir(), "old")
	gittest.WriteFiles(t, wd, map[string]string{"main.c": "int main(){}\n", "docs/x.md": "x\n"})
	gittest.WriteFiles(t, old, map[string]string{"o.txt": "o\n"})
	if err := os.Symlink("docs/x.md", filepath.Join(wd, "ln")); err != nil {
		t.Fatal(err)
	}
	repoDir := filepath.Join(dir, "history", "app")
	snap := history(t, g, repoDir, wd)
	gittest.WriteFiles(t, repoDir, map[string]string{".project_root": wd})
	snap("Snapshot for write_file")
	gittest.WriteFiles(t, wd, map[string]string{"main.c": "int main(){return 1;}\n"})
	snap("Snapshot for replace")
	sum := sha256.Sum256([]byte(old))
	oldDir := filepath.Join(dir, "history", hex.EncodeToString(sum[:]))
	history(t, g, oldDir, old)("Snapshot for write_file")
	gittest.WriteJSON(t, filepath.Join(dir, "projects.json"), map[string]any{"projects": map[string]string{wd: "app", old: "old"}})

	commits, oldCommits := g.Log(filepath.Join(repoDir, ".git")), g.Log(filepath.Join(oldDir, ".git"))
	before := gittest.DirDigest(t, dir)
	gittest.HideGit(t)
	s := gittest.NewStore(t)
	rep, err := Run(ctx, s, dir, gitimport.Options{})
	if err != nil || len(rep.Errors) != 0 || rep.SnapshotsImported != 5 || rep.Projects != 2 {
		t.Fatalf("run: %+v %v", rep, err)
	}
	list := gittest.CheckHistory(t, s, wd, commits, "imported from gemini: ")
	gittest.CheckHistory(t, s, old, oldCommits, "imported from gemini: ")
	last := strconv.FormatInt(commits[2].Author*1000, 10)
	if list[0].Session != "" || list[2].Session != "gemini:app" || list[2].Turn != last {
		t.Errorf("labels: %+v", list)
	}
	if _, err := s.Undo(ctx, wd, last, casckpt.UndoOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := gittest.ReadFiles(t, wd); !maps.Equal(got, commits[1].Files) {
		t.Errorf("after undo: %v, want %v", got, commits[1].Files)
	}
	rep, err = Run(ctx, s, dir, gitimport.Options{})
	if err != nil || rep.SnapshotsImported != 0 || rep.SnapshotsSkipped != 5 {
		t.Fatalf("second run: %+v %v", rep, err)
	}
	if gittest.DirDigest(t, dir) != before {
		t.Fatal("the import changed the source")
	}
	deleted, kept, _, err := ClearLegacy(ctx, s, dir, false)
	if err != nil || len(deleted) != 2 || len(kept) != 0 {
		t.Fatalf("clear: %v %v %v", deleted, kept, err)
	}
}
