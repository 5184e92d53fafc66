// Package gemini imports the checkpoints of Gemini CLI from its ~/.gemini
// directory, with no git program (see gitimport).
//
// With checkpointing on, Gemini CLI snapshots the project before each
// tool that edits files, into a shadow git repository per project,
// history/<slug>/.git, whose work tree is the project (the commands run
// with GIT_DIR and GIT_WORK_TREE; the repository records no
// core.worktree). Its first commit is "Initial commit" (--allow-empty);
// each snapshot is "git add ." and a commit without --allow-empty (source:
// google-gemini/gemini-cli packages/core/src/services/gitService.ts,
// setupShadowGitRepository, createFileSnapshot). The project is named by
// history/<slug>/.project_root, else by projects.json ({"projects":
// {"<path>": "<slug>"}}); older directories are named by the SHA-256 of
// the project's path (utils/paths.ts getProjectHash), matched against the
// paths projects.json lists.
//
// Each history/<slug> directory is a unit, deleted whole by ClearLegacy
// once imported. Each snapshot commit is labelled session "gemini:<slug>"
// and turn the commit's time in milliseconds (the checkpoint files of
// tmp/<slug>/checkpoints record a message ID, not a time).
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
	workdir, werr := gitimport.CleanWorkdir(f.projectRoot(p, slug))
	switch {
	case err != nil:
		s.Problems = append(s.Problems, fmt.Sprintf("%s: %v", gitDir, err))
	case werr != nil:
		s.Problems = append(s.Problems, fmt.Sprintf("%s: project: %v", p, werr))
		s.Unowned = refs
	case len(refs) > 0:
		session := agentrepo.Session(agent, slug)
		pr := gitimport.NewProject(workdir, refs)
		pr.Agent = agent
		pr.Label = func(c gitimport.CommitInfo) (string, string) {
			if session == "" || c.Message == "Initial commit" {
				return "", ""
			}
			return session, strconv.FormatInt(c.Time.UnixMilli(), 10)
		}
		s.Projects = append(s.Projects, pr)
	}
	return gitimport.Unit{Path: p, Sources: []*gitimport.Source{s}}, true
}

// projectRoot returns the project of history directory p: its
// .project_root, else what projects.json names slug by ("" when nothing).
func (f *finder) projectRoot(p, slug string) string {
	if b, err := readSmall(filepath.Join(p, ".project_root")); err == nil {
		return string(b)
	}
	if f.projects == nil {
		f.projects = map[string]string{}
		var doc struct {
			Projects map[string]string `json:"projects"`
		}
		if b, err := readSmall(filepath.Join(f.dir, "projects.json")); err == nil && json.Unmarshal(b, &doc) == nil {
			for path, s := range doc.Projects {
				sum := sha256.Sum256([]byte(path))
				f.projects[s] = path
				f.projects[hex.EncodeToString(sum[:])] = path
			}
		}
	}
	return f.projects[slug]
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
