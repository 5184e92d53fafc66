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
// and turn the commit's time in milliseconds (the checkpoint files of
// tmp/<slug>/checkpoints record the commit, the tool call and the
// prompt's ID, not a time).
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
