// Package gemini imports the checkpoints of Gemini CLI from its ~/.gemini
// directory, with no git program (see gitimport).
//
// As Gemini CLI 0.61.0 does it (@google/gemini-cli 0.61.0 from npm, its
// bundle's packages/core services/gitService.js, config/storage.js,
// config/projectRegistry.js, config/storageMigration.js and
// utils/checkpointUtils.js; google-gemini/gemini-cli packages/core/src
// for the sources): with checkpointing on, the interactive CLI snapshots
// the project before each edit tool (write_file, replace) that waits for
// approval, into a shadow git repository per project, history/<slug>/.git,
// whose work tree is the project (the commands run with GIT_DIR and
// GIT_WORK_TREE; the repository records no core.worktree).
// setupShadowGitRepository writes history/<slug>/.gitconfig (user Gemini
// CLI <gemini-cli@google.com>) and an empty .gitconfig_system_empty, and
// runs "git init --initial-branch main" and "git commit -m 'Initial
// commit' --allow-empty" there; createFileSnapshot runs "git add .", and
// "git commit -m 'Snapshot for <tool>' --no-verify" unless the status is
// clean (then the checkpoint names HEAD), so no other commit is empty.
//
// The slug is the project directory's base name, lower-cased with each
// run of other characters than a-z and 0-9 made one "-" ("-1", "-2", ...
// added on a clash); projects.json maps the project's absolute path to it
// ({"projects": {"<path>": "<slug>"}}), and history/<slug>/.project_root
// (and tmp/<slug>/.project_root) holds that path, read trimmed. Older
// versions named the directories by the SHA-256 of the path (utils/paths.ts
// getProjectHash); the newer CLI copies such a directory to its slug's
// and leaves the old one, so the same commits are in both: gitimport
// imports them once, and both are labelled with the slug projects.json
// gives the path.
//
// Each history/<slug> directory is a unit, deleted whole by ClearLegacy
// once imported. Each snapshot commit is labelled session "gemini:<slug>"
// and turn the time of its checkpoint in milliseconds. Gemini CLI writes
// a checkpoint file per checkpointed tool call (processRestorableToolCalls
// and generateCheckpointFileName of utils/checkpointUtils.js, in the
// bundle's chunk-5FZXKDXH.js):
// tmp/<slug>/checkpoints/<ISO time, ":" as "-" and "." as
// "_">-<file's base name>-<tool>.json, e.g.
// 2026-11-26T20-50-36_123Z-notes.txt-replace.json, a JSON object with
// commitHash (the full hash), toolCall, messageId (the prompt's ID,
// "<session>########<prompt count>") and the chat history. The turn is
// the time in the name of the earliest file naming the commit (a clean
// checkpoint names HEAD again). It is one turn per checkpoint, not per
// prompt: each commit is the project before its tool's edit, as the
// CLI's own /restore offers it, so the last edit of a prompt is only in
// the next prompt's first commit. A commit no checkpoint file names (the
// files deleted, or naming an abbreviated or unknown hash) is labelled by
// its commit time in milliseconds, which git keeps in whole seconds.
package gemini

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/casckpt/casckpt/migrate/gitimport"
	"github.com/casckpt/casckpt/migrate/internal/agentrepo"
)

// KindProject is Gemini CLI's layout: one repository per project
// (gitimport.Source.Kind).
const KindProject gitimport.Kind = "project"

// agent names Gemini CLI in reasons and sessions.
const agent = "gemini"

// maxSmallFile bounds the size of .project_root and projects.json.
const maxSmallFile = 16 << 20

// finder finds Gemini CLI's shadow repositories under a .gemini directory.
type finder struct {
	dir      string
	projects map[string]string // slug (or path hash) to path; nil until read
	slugs    map[string]string // path to slug, from projects.json
}

var _ gitimport.Finder = (*finder)(nil)

// Candidates lists the history/<slug> directories that hold a .git
// directory.
func (f *finder) Candidates() ([]string, error) {
	return agentrepo.Subdirs(filepath.Join(f.dir, "history"), "")
}

// Read reads one project's repository.
func (f *finder) Read(p string) (gitimport.Unit, bool) {
	gitDir := filepath.Join(p, ".git")
	if !gitimport.IsGitDir(gitDir) {
		return gitimport.Unit{}, false
	}
	slug := filepath.Base(p)
	s := &gitimport.Source{Path: gitDir, Dir: p, Unit: p, Kind: KindProject}
	refs, err := gitimport.ReadRefs(gitDir)
	root := f.projectRoot(p, slug)
	if named := f.slugs[root]; named != "" {
		slug = named // a directory named by the path's hash, or copied
	}
	workdir, werr := gitimport.CleanWorkdir(root)
	switch {
	case err != nil:
		s.Problems = append(s.Problems, fmt.Sprintf("%s: %v", gitDir, err))
	case werr != nil:
		s.Problems = append(s.Problems, fmt.Sprintf("%s: project: %v", p, werr))
		s.Unowned = refs
	case len(refs) > 0:
		session := agentrepo.Session(agent, slug)
		// read on the first label: status and clear-legacy read units but label no commit
		turns := sync.OnceValue(func() map[string]int64 { return checkpointTurns(f.checkpointDirs(p, slug)) })
		pr := gitimport.NewProject(workdir, refs)
		pr.Agent = agent
		pr.Label = func(c gitimport.CommitInfo) (string, string) {
			if session == "" || c.Message == "Initial commit" {
				return "", ""
			}
			if ms, ok := turns()[c.Hash]; ok {
				return session, strconv.FormatInt(ms, 10)
			}
			return session, strconv.FormatInt(c.Time.UnixMilli(), 10)
		}
		s.Projects = append(s.Projects, pr)
	}
	return gitimport.Unit{Path: p, Sources: []*gitimport.Source{s}}, true
}

// projectRoot returns the project of history directory p: its
// .project_root (trimmed, as the CLI reads it), else what projects.json
// names slug by ("" when nothing).
func (f *finder) projectRoot(p, slug string) string {
	if f.projects == nil {
		f.projects, f.slugs = map[string]string{}, map[string]string{}
		var doc struct {
			Projects map[string]string `json:"projects"`
		}
		if b, err := readSmall(filepath.Join(f.dir, "projects.json")); err == nil && json.Unmarshal(b, &doc) == nil {
			for path, s := range doc.Projects {
				sum := sha256.Sum256([]byte(path))
				f.projects[s] = path
				f.projects[hex.EncodeToString(sum[:])] = path
				f.slugs[path] = s
			}
		}
	}
	if b, err := readSmall(filepath.Join(p, ".project_root")); err == nil {
		return strings.TrimSpace(string(b))
	}
	return f.projects[slug]
}

// checkpointDirs lists the checkpoint directories of history directory p
// labelled slug: tmp/<its name>/checkpoints, and tmp/<slug>/checkpoints
// when slug differs (a directory named by the path's hash).
func (f *finder) checkpointDirs(p, slug string) []string {
	dirs := []string{filepath.Join(f.dir, "tmp", filepath.Base(p), "checkpoints")}
	if slug != filepath.Base(p) {
		dirs = append(dirs, filepath.Join(f.dir, "tmp", slug, "checkpoints"))
	}
	return dirs
}

// maxCheckpoints bounds the checkpoint files read in one directory.
const maxCheckpoints = 100_000

// checkpointTurns maps each commit hash a checkpoint file in dirs names
// to the time in the name of the earliest such file, in milliseconds.
// Files not named as the CLI names them, larger than maxSmallFile or not
// JSON are left out; a hash no commit has (abbreviated, unknown) is
// never looked up.
func checkpointTurns(dirs []string) map[string]int64 {
	turns := map[string]int64{}
	for _, dir := range dirs {
		entries, _ := os.ReadDir(dir) // a missing directory names nothing
		for _, e := range entries[:min(len(entries), maxCheckpoints)] {
			ms, ok := checkpointTime(e.Name())
			if !ok || !e.Type().IsRegular() {
				continue
			}
			var doc struct {
				CommitHash string `json:"commitHash"`
			}
			b, err := readSmall(filepath.Join(dir, e.Name()))
			if err != nil || json.Unmarshal(b, &doc) != nil || doc.CommitHash == "" {
				continue
			}
			h := strings.ToLower(doc.CommitHash)
			if old, seen := turns[h]; !seen || ms < old {
				turns[h] = ms
			}
		}
	}
	return turns
}

// checkpointTime returns the time, in Unix milliseconds, at the start of
// the checkpoint file name (2006-01-02T15-04-05_000Z-<file>-<tool>.json).
func checkpointTime(name string) (int64, bool) {
	const stamp = "2006-01-02T15-04-05_000Z-"
	if len(name) <= len(stamp) || name[19] != '_' || name[23:25] != "Z-" || !strings.HasSuffix(name, ".json") {
		return 0, false
	}
	t, err := time.Parse("2006-01-02T15-04-05", name[:19])
	frac, ferr := strconv.ParseUint(name[20:23], 10, 16)
	if err != nil || ferr != nil {
		return 0, false
	}
	return t.UnixMilli() + int64(frac), true
}

// readSmall reads a file of at most maxSmallFile bytes.
func readSmall(name string) ([]byte, error) {
	file, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	b, err := io.ReadAll(io.LimitReader(file, maxSmallFile+1))
	if err == nil && len(b) > maxSmallFile {
		err = fmt.Errorf("%s: larger than %d bytes", name, maxSmallFile)
	}
	return b, err
}

// Run imports every commit of Gemini CLI's repositories under dir (the
// .gemini directory) that is not imported yet (gitimport.Run). It never
// writes there.
func Run(ctx context.Context, store gitimport.Importer, dir string, opts gitimport.Options) (gitimport.Report, error) {
	return gitimport.Run(ctx, store, &finder{dir: dir}, opts)
}

// Status lists Gemini CLI's repositories under dir with their size and
// whether they are fully imported (gitimport.Status).
func Status(ctx context.Context, store gitimport.Importer, dir string) ([]gitimport.UnitStatus, error) {
	return gitimport.Status(ctx, store, &finder{dir: dir})
}

// ClearLegacy deletes, each whole, Gemini CLI's repositories under dir
// that are fully imported (gitimport.Clear).
func ClearLegacy(ctx context.Context, store gitimport.Importer, dir string, dryRun bool) (deleted, kept []string, bytesFreed int64, err error) {
	return gitimport.Clear(ctx, store, &finder{dir: dir}, dryRun)
}
