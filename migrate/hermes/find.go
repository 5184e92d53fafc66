package hermes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/migrate/gitimport"
)

// The layouts of Hermes' repositories (gitimport.Source.Kind).
const (
	// KindShared is the shared store: a bare repository whose
	// refs/hermes/<hash> each hold one project's history, the project's
	// workdir being named by projects/<hash>.json.
	KindShared gitimport.Kind = "shared"
	// KindShadow is a per-directory shadow repository from before the
	// shared store: one project, named by its HERMES_WORKDIR file, whose
	// history is on the repository's current branch.
	KindShadow gitimport.Kind = "shadow"
)

// finder finds the legacy stores in a Hermes checkpoints directory: its
// units are the top-level entries (see the package documentation).
type finder struct{ from string }

var _ gitimport.Finder = finder{}

// findSources lists the legacy repositories under the source directory from,
// ordered by Path, with their projects. A missing directory holds none.
// Only a directory that cannot be listed is an error; a repository that
// cannot be read is returned with its Problems. It writes nothing.
func findSources(from string) ([]gitimport.Source, error) {
	units, err := gitimport.Scan(finder{from})
	if err != nil {
		return nil, err
	}
	out := []gitimport.Source{}
	for _, u := range units {
		for _, s := range u.Sources {
			out = append(out, *s)
		}
	}
	slices.SortFunc(out, func(a, b gitimport.Source) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// legacyPrefix starts the names of the directories the Hermes upgrade
// moved the older stores to.
const legacyPrefix = "legacy-"

// Candidates lists the directories directly under the source directory, in
// name order, leaving out hidden ones (Hermes' lock and marker files are
// hidden) and symbolic links.
func (f finder) Candidates() ([]string, error) {
	from := f.from
	entries, err := os.ReadDir(from)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("legacy stores: %w", err)
	}
	var paths []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			paths = append(paths, filepath.Join(from, e.Name()))
		}
	}
	return paths, nil
}

// Read reads the unit at p, a directory directly under the source
// directory: a legacy-* directory always is one; another directory is one
// if it is a legacy repository.
func (finder) Read(p string) (gitimport.Unit, bool) {
	name := filepath.Base(p)
	u := gitimport.Unit{Path: p}
	if s := probe(p, name); s != nil { // a repository, maybe moved whole
		s.Unit = p
		u.Sources = append(u.Sources, s)
		return u, true
	}
	if !strings.HasPrefix(name, legacyPrefix) {
		return u, false
	}
	inner, err := os.ReadDir(p)
	if err != nil {
		u.Problems = append(u.Problems, fmt.Sprintf("%s: %v", p, err))
	}
	for _, ie := range inner {
		if !ie.IsDir() {
			continue
		}
		if s := probe(filepath.Join(p, ie.Name()), ie.Name()); s != nil {
			s.Unit = p
			u.Sources = append(u.Sources, s)
		}
	}
	return u, true
}

// probe recognises a legacy repository in dir (whose base name is name)
// and reads its references and projects; nil if dir is none. Anything that
// looks like a git directory but is damaged is returned with a problem, so
// that its unit is never deleted.
func probe(dir, name string) *gitimport.Source {
	gitDir := ""
	for _, cand := range []string{dir, filepath.Join(dir, ".git")} {
		if exists(filepath.Join(cand, "HEAD")) || isDir(filepath.Join(cand, "objects")) {
			gitDir = cand
			break
		}
	}
	marker := filepath.Join(dir, "HERMES_WORKDIR")
	if gitDir != "" && gitDir != dir && !exists(marker) && exists(filepath.Join(gitDir, "HERMES_WORKDIR")) {
		marker = filepath.Join(gitDir, "HERMES_WORKDIR")
	}
	shadow := exists(marker)
	if gitDir == "" && !shadow {
		return nil // a stray directory (ledgers/ and the like)
	}
	s := &gitimport.Source{Path: gitDir, Dir: dir, Kind: KindShadow, Projects: []gitimport.Project{}, Problems: []string{}}
	if !shadow && (name == "store" || isDir(filepath.Join(gitDir, "projects")) || isDir(filepath.Join(gitDir, "refs", "hermes"))) {
		s.Kind = KindShared
	}
	switch {
	case gitDir == "":
		s.Path = dir
		s.Problems = append(s.Problems, fmt.Sprintf("%s: has a HERMES_WORKDIR file but is not a git repository", dir))
		return s
	case !gitimport.IsGitDir(gitDir):
		s.Problems = append(s.Problems, fmt.Sprintf("%s: damaged git repository: a HEAD file and an objects directory are needed", gitDir))
		return s
	}
	refs, err := gitimport.ReadRefs(gitDir)
	if err != nil {
		s.Problems = append(s.Problems, fmt.Sprintf("%s: references: %v", gitDir, err))
		return s
	}
	if s.Kind == KindShared {
		sharedProjects(s, refs)
	} else {
		shadowProject(s, refs, marker)
	}
	return s
}

// hermesRefs is where the shared store keeps each project's history.
const hermesRefs = "refs/hermes/"

// projectRecord is a shared store's projects/<hash>.json.
type projectRecord struct {
	Workdir   casckpt.JSONPath `json:"workdir"`
	CreatedAt *float64         `json:"created_at"`
	LastTouch *float64         `json:"last_touch"`
}

// sharedProjects assigns a shared store's refs/hermes/<hash> to the
// projects named by projects/<hash>.json; other refs stay unowned.
func sharedProjects(s *gitimport.Source, refs []gitimport.Ref) {
	for _, r := range refs {
		hash, ok := strings.CutPrefix(r.Name, hermesRefs)
		if !ok {
			s.Unowned = append(s.Unowned, r)
			continue
		}
		rec, err := readRecord(filepath.Join(s.Path, "projects", hash+".json"))
		if err != nil {
			s.Problems = append(s.Problems, fmt.Sprintf("%s: %s: %v", s.Path, r.Name, err))
			s.Unowned = append(s.Unowned, r)
			continue
		}
		p := gitimport.NewProject(string(rec.Workdir), []gitimport.Ref{r})
		p.Created, p.LastTouch = unixTime(rec.CreatedAt), unixTime(rec.LastTouch)
		s.Projects = append(s.Projects, p)
	}
	slices.SortFunc(s.Projects, func(a, b gitimport.Project) int { return strings.Compare(a.Workdir, b.Workdir) })
}

// readRecord reads and checks a project record.
func readRecord(path string) (projectRecord, error) {
	var rec projectRecord
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return rec, fmt.Errorf("no project record %s: the project's directory is unknown", filepath.Base(path))
	}
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(stripBOM(b), &rec); err != nil {
		return rec, fmt.Errorf("project record %s: %w", filepath.Base(path), err)
	}
	workdir, err := gitimport.CleanWorkdir(string(rec.Workdir))
	rec.Workdir = casckpt.JSONPath(workdir)
	if err != nil {
		return rec, fmt.Errorf("project record %s: %w", filepath.Base(path), err)
	}
	return rec, nil
}

// shadowProject assigns every ref of a shadow repository to the project its
// HERMES_WORKDIR file names.
func shadowProject(s *gitimport.Source, refs []gitimport.Ref, marker string) {
	b, err := os.ReadFile(marker)
	workdir := ""
	if err == nil {
		workdir, err = gitimport.CleanWorkdir(string(stripBOM(b)))
	} else if errors.Is(err, fs.ErrNotExist) {
		err = errors.New("no HERMES_WORKDIR file: the project's directory is unknown")
	}
	if err != nil {
		s.Problems = append(s.Problems, fmt.Sprintf("%s: %v", s.Dir, err))
		s.Unowned = refs
		return
	}
	if len(refs) == 0 {
		return // no checkpoint was ever taken
	}
	s.Projects = append(s.Projects, gitimport.NewProject(workdir, refs))
}

func stripBOM(b []byte) []byte { return bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) }

// unixTime converts the seconds Hermes records; zero when unset or absurd.
func unixTime(sec *float64) time.Time {
	if sec == nil || *sec <= 0 || *sec > 1<<40 || math.IsNaN(*sec) {
		return time.Time{}
	}
	whole, frac := math.Modf(*sec)
	return time.Unix(int64(whole), int64(frac*1e9))
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
