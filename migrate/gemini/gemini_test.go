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
	"time"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/migrate/gitimport"
	"github.com/casckpt/casckpt/migrate/gitimport/gittest"
)

// cli makes a .gemini directory as Gemini CLI 0.61.0 does (see the
// package doc for the files of its npm bundle this follows).
type cli struct {
	t   *testing.T
	g   *gittest.Git
	dir string // the .gemini directory
	// projects is projects.json's "projects": each path's slug.
	projects map[string]string
}

// open starts the CLI in project wd with checkpointing on: Storage's
// ProjectRegistry names it by slug (ensureOwnershipMarkers writes
// tmp/<slug>/.project_root and history/<slug>/.project_root, the path
// with no newline; projects.json is saved by JSON.stringify(data, null,
// 2)), StorageMigration copies a legacy history/<sha256 of wd> whole to
// history/<slug> (fs.cp, recursive) when that holds only .project_root,
// then GitService's setupShadowGitRepository runs. It returns
// createFileSnapshot, which takes a checkpoint before the tool edits.
func (c *cli) open(wd, slug string) func(tool, file string) string {
	t := c.t
	c.projects[wd] = slug
	gittest.WriteJSON(t, filepath.Join(c.dir, "projects.json"), map[string]any{"projects": c.projects})
	repoDir := filepath.Join(c.dir, "history", slug)
	for _, base := range []string{filepath.Join(c.dir, "tmp", slug), repoDir} {
		gittest.WriteFiles(t, base, map[string]string{".project_root": wd})
	}
	sum := sha256.Sum256([]byte(wd))
	if legacy := filepath.Join(c.dir, "history", hex.EncodeToString(sum[:])); dirExists(legacy) {
		if err := os.CopyFS(repoDir, os.DirFS(legacy)); err != nil {
			t.Fatal(err)
		}
	}
	return c.shadow(repoDir, wd, filepath.Join(c.dir, "tmp", slug, "checkpoints"))
}

// shadow is setupShadowGitRepository for the repository in repoDir of
// project wd: it writes repoDir/.gitconfig (user Gemini CLI
// <gemini-cli@google.com>, commit.gpgsign false) and an empty
// repoDir/.gitconfig_system_empty, the two configurations of its git
// environment (getShadowRepoEnv, which also sets the author and committer
// and clears GIT_DIR and GIT_WORK_TREE); unless repoDir is a repository,
// "git init --initial-branch main" and "git commit -m 'Initial commit'
// --allow-empty" there; then copies the project's .gitignore (or "") to
// repoDir/.gitignore. It returns createFileSnapshot with the checkpoint
// file processRestorableToolCalls writes into checkpoints: in wd with
// GIT_DIR and GIT_WORK_TREE, "git add .", then, unless "git status" is
// clean (HEAD is the checkpoint), "git commit -m 'Snapshot for <tool>'
// --no-verify".
func (c *cli) shadow(repoDir, wd, checkpoints string) func(tool, file string) string {
	t, g := c.t, c.g
	gittest.WriteFiles(t, repoDir, map[string]string{
		".gitconfig":              "[user]\n  name = Gemini CLI\n  email = gemini-cli@google.com\n[commit]\n  gpgsign = false\n",
		".gitconfig_system_empty": ""})
	env := []string{"GIT_CONFIG_GLOBAL=" + filepath.Join(repoDir, ".gitconfig"), "GIT_CONFIG_SYSTEM=" + filepath.Join(repoDir, ".gitconfig_system_empty"),
		"GIT_AUTHOR_NAME=Gemini CLI", "GIT_AUTHOR_EMAIL=gemini-cli@google.com", "GIT_COMMITTER_NAME=Gemini CLI", "GIT_COMMITTER_EMAIL=gemini-cli@google.com"}
	if !dirExists(filepath.Join(repoDir, ".git")) {
		g.Run(repoDir, env, "init", "--initial-branch", "main")
		g.Run(repoDir, env, "commit", "-m", "Initial commit", "--allow-empty")
	}
	ignore, _ := os.ReadFile(filepath.Join(wd, ".gitignore"))
	gittest.WriteFiles(t, repoDir, map[string]string{".gitignore": string(ignore)})
	env = append(env, "GIT_DIR="+filepath.Join(repoDir, ".git"), "GIT_WORK_TREE="+wd)
	return func(tool, file string) string {
		g.Tick()
		g.Run(wd, env, "add", ".")
		if g.Run(wd, env, "status", "--porcelain") != "" {
			g.Run(wd, env, "commit", "-m", "Snapshot for "+tool, "--no-verify")
		}
		hash := g.Run(wd, env, "rev-parse", "HEAD")
		name := time.Unix(g.Clock, 0).UTC().Format("2006-01-02T15-04-05_000Z") + "-" + filepath.Base(file) + "-" + tool + ".json"
		gittest.WriteJSON(t, filepath.Join(checkpoints, name), map[string]any{"history": []any{}, "clientHistory": []any{},
			"toolCall":   map[string]any{"name": tool, "args": map[string]any{"file_path": filepath.Join(wd, file)}},
			"commitHash": hash, "messageId": "session########" + strconv.FormatInt(g.Clock, 10)})
		return hash
	}
}

// dirExists says whether name is a directory.
func dirExists(name string) bool {
	info, err := os.Stat(name)
	return err == nil && info.IsDir()
}

// TestImportGeminiWithoutGit imports a .gemini directory made as Gemini
// CLI 0.61.0 makes it, with git hidden: project app named by its slug
// (its .project_root), with two snapshots and a checkpoint of an
// unchanged tree (no commit); project "Old Proj" first checkpointed by an
// older CLI into history/<sha256 of its path>, which the newer CLI copied
// to history/old-proj and went on in. Every changed commit is a snapshot
// with its bytes, modes and links, imported once, labelled
// gemini:<slug> (the copied-from directory too) and the commit's time in
// milliseconds; the turn undoes; a second run imports nothing; the
// source is unchanged; clear-legacy deletes the three repositories.
func TestImportGeminiWithoutGit(t *testing.T) {
	ctx := context.Background()
	g := gittest.NewGit(t)
	dir := filepath.Join(t.TempDir(), ".gemini")
	wd := filepath.Join(t.TempDir(), "app")
	old := filepath.Join(t.TempDir(), "Old Proj")
	gittest.WriteFiles(t, wd, map[string]string{"main.c": "int main(){}\n", "docs/x.md": "x\n", ".gitignore": "*.o\n", "a.o": "obj"})
	gittest.WriteFiles(t, old, map[string]string{"o.txt": "o\n"})
	if err := os.Symlink("docs/x.md", filepath.Join(wd, "ln")); err != nil {
		t.Fatal(err)
	}
	c := &cli{t: t, g: g, dir: dir, projects: map[string]string{}}
	snap := c.open(wd, "app")
	snap("write_file", "new.txt")
	gittest.WriteFiles(t, wd, map[string]string{"main.c": "int main(){return 1;}\n", "new.txt": "new\n"})
	first := snap("replace", "main.c")
	if again := snap("write_file", "other.txt"); again != first { // nothing changed: HEAD
		t.Fatalf("a clean checkpoint made commit %s", again)
	}
	sum := sha256.Sum256([]byte(old))
	legacy := filepath.Join(dir, "history", hex.EncodeToString(sum[:]))
	c.shadow(legacy, old, filepath.Join(dir, "tmp", hex.EncodeToString(sum[:]), "checkpoints"))("write_file", "o.txt")
	gittest.WriteFiles(t, old, map[string]string{"o.txt": "o2\n"})
	c.open(old, "old-proj")("replace", "o.txt")

	commits, oldCommits := g.Log(filepath.Join(dir, "history", "app", ".git")), g.Log(filepath.Join(dir, "history", "old-proj", ".git"))
	if len(commits) != 3 || len(oldCommits) != 3 || len(g.Log(filepath.Join(legacy, ".git"))) != 2 {
		t.Fatalf("the fixture: %d, %d commits", len(commits), len(oldCommits))
	}
	before := gittest.DirDigest(t, dir)
	gittest.HideGit(t)
	s := gittest.NewStore(t)
	rep, err := Run(ctx, s, dir, gitimport.Options{})
	if err != nil || len(rep.Errors) != 0 || rep.SnapshotsImported != 6 || rep.SnapshotsSkipped != 2 || rep.Projects != 2 {
		t.Fatalf("run: %+v %v", rep, err)
	}
	list := gittest.CheckHistory(t, s, wd, commits, "imported from gemini: ")
	oldList := gittest.CheckHistory(t, s, old, oldCommits, "imported from gemini: ")
	last := strconv.FormatInt(commits[2].Author*1000, 10)
	if list[0].Session != "" || list[1].Session != "gemini:app" || list[2].Session != "gemini:app" || list[2].Turn != last {
		t.Errorf("labels: %+v", list)
	}
	if oldList[0].Session != "" || oldList[1].Session != "gemini:old-proj" || oldList[2].Session != "gemini:old-proj" {
		t.Errorf("labels of the copied project: %+v", oldList)
	}
	if _, err := s.Undo(ctx, wd, last, casckpt.UndoOptions{}); err != nil {
		t.Fatal(err)
	}
	want := maps.Clone(commits[1].Files)
	want["a.o"] = gittest.File{Kind: "file", Data: "obj"} // ignored by the project's .gitignore: never snapshotted, left alone
	if got := gittest.ReadFiles(t, wd); !maps.Equal(got, want) {
		t.Errorf("after undo: %v, want %v", got, want)
	}
	rep, err = Run(ctx, s, dir, gitimport.Options{})
	if err != nil || rep.SnapshotsImported != 0 || rep.SnapshotsSkipped != 8 {
		t.Fatalf("second run: %+v %v", rep, err)
	}
	if gittest.DirDigest(t, dir) != before {
		t.Fatal("the import changed the source")
	}
	deleted, kept, _, err := ClearLegacy(ctx, s, dir, false)
	if err != nil || len(deleted) != 3 || len(kept) != 0 {
		t.Fatalf("clear: %v %v %v", deleted, kept, err)
	}
}
