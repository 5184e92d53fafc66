package gemini

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
	// step, when not 0, puts each next checkpoint in the second of the one
	// before (git's clock not moved), step milliseconds later by its file.
	step, ms int64
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
		if c.step == 0 {
			g.Tick()
		}
		c.ms += c.step
		g.Run(wd, env, "add", ".")
		if g.Run(wd, env, "status", "--porcelain") != "" {
			g.Run(wd, env, "commit", "-m", "Snapshot for "+tool, "--no-verify")
		}
		hash := g.Run(wd, env, "rev-parse", "HEAD")
		// generateCheckpointFileName: new Date().toISOString() with ":" as
		// "-" and "." as "_".
		iso := time.UnixMilli(g.Clock*1000 + c.ms).UTC().Format("2006-01-02T15:04:05.000Z")
		name := strings.NewReplacer(":", "-", ".", "_").Replace(iso) + "-" + filepath.Base(file) + "-" + tool + ".json"
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

// TestImportGeminiSameSecond imports three checkpoints Gemini CLI
// committed in one second (git keeps whole seconds), 250 ms apart by
// their checkpoint files, beside files naming an abbreviated hash (of the
// second commit, earlier), an unknown hash, no JSON and a name not the
// CLI's: each commit is its own turn, the time of its checkpoint file in
// milliseconds, and undo of the last turn reverts only its change.
func TestImportGeminiSameSecond(t *testing.T) {
	ctx := context.Background()
	g := gittest.NewGit(t)
	dir := filepath.Join(t.TempDir(), ".gemini")
	wd := filepath.Join(t.TempDir(), "app")
	gittest.WriteFiles(t, wd, map[string]string{"f.txt": "0\n"})
	c := &cli{t: t, g: g, dir: dir, projects: map[string]string{}}
	snap := c.open(wd, "app")
	snap("replace", "f.txt")
	c.step = 250
	gittest.WriteFiles(t, wd, map[string]string{"f.txt": "1\n"})
	snap("write_file", "g.txt")
	gittest.WriteFiles(t, wd, map[string]string{"g.txt": "g\n"})
	snap("replace", "f.txt")
	commits := g.Log(filepath.Join(dir, "history", "app", ".git"))
	if len(commits) != 4 || commits[1].Author != commits[3].Author {
		t.Fatalf("the fixture: %+v", commits)
	}
	checkpoints := filepath.Join(dir, "tmp", "app", "checkpoints")
	gittest.WriteJSON(t, filepath.Join(checkpoints, "2000-01-01T00-00-00_000Z-f.txt-replace.json"), map[string]any{"commitHash": commits[2].Hash[:12]})
	gittest.WriteJSON(t, filepath.Join(checkpoints, "2000-01-01T00-00-00_001Z-f.txt-replace.json"), map[string]any{"commitHash": strings.Repeat("ab", 20)})
	gittest.WriteFiles(t, checkpoints, map[string]string{"2000-01-01T00-00-00_002Z-f.txt-replace.json": "{",
		"notes.json": `{"commitHash": "` + commits[3].Hash + `"}`})

	gittest.HideGit(t)
	s := gittest.NewStore(t)
	if rep, err := Run(ctx, s, dir, gitimport.Options{}); err != nil || len(rep.Errors) != 0 || rep.SnapshotsImported != 4 {
		t.Fatalf("run: %+v %v", rep, err)
	}
	list := gittest.CheckHistory(t, s, wd, commits, "imported from gemini: ")
	for i, off := range []int64{0, 250, 500} {
		if want := strconv.FormatInt(commits[1].Author*1000+off, 10); list[i+1].Session != "gemini:app" || list[i+1].Turn != want {
			t.Errorf("commit %d: %s %s, want turn %s", i+1, list[i+1].Session, list[i+1].Turn, want)
		}
	}
	if _, err := s.Undo(ctx, wd, list[3].Turn, casckpt.UndoOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, want := gittest.ReadFiles(t, wd), commits[2].Files; !maps.Equal(got, want) {
		t.Errorf("after undo: %v, want %v", got, want)
	}
}
