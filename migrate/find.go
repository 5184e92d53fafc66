package migrate

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

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/casckpt/casckpt"
)

// Kind is the layout of a legacy repository.
type Kind string

// The layouts findSources recognises.
const (
	// KindShared is the shared store: a bare repository whose
	// refs/hermes/<hash> each hold one project's history, the project's
	// workdir being named by projects/<hash>.json.
	KindShared Kind = "shared"
	// KindShadow is a per-directory shadow repository from before the
	// shared store: one project, named by its HERMES_WORKDIR file, whose
	// history is on the repository's current branch.
	KindShadow Kind = "shadow"
)

// Source is one legacy git repository found by findSources.
type Source struct {
	// Path is the repository's git directory (objects/, refs/, HEAD).
	Path string
	// Dir is the directory that was found: Path itself, or the directory
	// holding Path when the repository is a .git subdirectory.
	Dir string
	// Unit is the top-level entry of the source directory that holds the
	// repository: Dir itself, or the legacy-* directory it was moved to.
	// ClearLegacy deletes units whole.
	Unit string
	Kind Kind
	// Projects are the histories the repository holds, by workdir.
	Projects []Project
	// Problems describe what could not be read. Commits they hide are not
	// imported, and the unit is never reported as migrated.
	Problems []string

	// unowned are tips that belong to no project (a shared store's other
	// refs, or any ref whose project is unknown). Their commits must be
	// held by a project for the unit to count as migrated.
	unowned []tip
}

// Project is one project's history in a legacy repository.
type Project struct {
	// Workdir is the project directory as the repository records it.
	Workdir string
	// Refs name the references holding the history: refs/hermes/<hash> in
	// the shared store; in a shadow repository HEAD, written with the
	// branch it points to ("HEAD -> refs/heads/main"), and every other ref.
	Refs []string
	// Created and LastTouch come from the shared store's project record;
	// they are zero when it has none, and for shadow repositories (Run then
	// takes the times of the oldest and newest commits).
	Created, LastTouch time.Time

	tips []plumbing.Hash
}

// tip is a reference and the object it names.
type tip struct {
	name string
	hash plumbing.Hash
}

// unit is a top-level entry of the source directory: the shared store, a
// shadow repository, or a legacy-* directory of them.
type unit struct {
	path     string
	sources  []*Source
	problems []string
}

// findSources lists the legacy repositories under the source directory from,
// ordered by Path, with their projects. A missing directory holds none.
// Only a directory that cannot be listed is an error; a repository that
// cannot be read is returned with its Problems. It writes nothing.
func findSources(from string) ([]Source, error) {
	units, err := scan(from)
	if err != nil {
		return nil, err
	}
	out := []Source{}
	for _, u := range units {
		for _, s := range u.sources {
			out = append(out, *s)
		}
	}
	slices.SortFunc(out, func(a, b Source) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// legacyPrefix starts the names of the directories the Hermes upgrade
// moved the older stores to.
const legacyPrefix = "legacy-"

// scan finds the units under from, in name order, and reads their sources'
// references and project records.
func scan(from string) ([]unit, error) {
	paths, err := candidates(from)
	if err != nil {
		return nil, err
	}
	var units []unit
	for _, p := range paths {
		if u, ok := scanUnit(p); ok {
			units = append(units, u)
		}
	}
	return units, nil
}

// candidates lists the directories directly under from, in name order,
// leaving out hidden ones (Hermes' lock and marker files are hidden) and
// symbolic links.
func candidates(from string) ([]string, error) {
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

// scanUnit reads the unit at p, a directory directly under the source
// directory: a legacy-* directory always is one; another directory is one
// if it is a legacy repository.
func scanUnit(p string) (unit, bool) {
	name := filepath.Base(p)
	u := unit{path: p}
	if s := probe(p, name); s != nil { // a repository, maybe moved whole
		s.Unit = p
		u.sources = append(u.sources, s)
		return u, true
	}
	if !strings.HasPrefix(name, legacyPrefix) {
		return u, false
	}
	inner, err := os.ReadDir(p)
	if err != nil {
		u.problems = append(u.problems, fmt.Sprintf("%s: %v", p, err))
	}
	for _, ie := range inner {
		if !ie.IsDir() {
			continue
		}
		if s := probe(filepath.Join(p, ie.Name()), ie.Name()); s != nil {
			s.Unit = p
			u.sources = append(u.sources, s)
		}
	}
	return u, true
}

// probe recognises a legacy repository in dir (whose base name is name)
// and reads its references and projects; nil if dir is none. Anything that
// looks like a git directory but is damaged is returned with a problem, so
// that its unit is never deleted.
func probe(dir, name string) *Source {
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
	s := &Source{Path: gitDir, Dir: dir, Kind: KindShadow, Projects: []Project{}, Problems: []string{}}
	if !shadow && (name == "store" || isDir(filepath.Join(gitDir, "projects")) || isDir(filepath.Join(gitDir, "refs", "hermes"))) {
		s.Kind = KindShared
	}
	switch {
	case gitDir == "":
		s.Path = dir
		s.Problems = append(s.Problems, fmt.Sprintf("%s: has a HERMES_WORKDIR file but is not a git repository", dir))
		return s
	case !isGitDir(gitDir):
		s.Problems = append(s.Problems, fmt.Sprintf("%s: damaged git repository: a HEAD file and an objects directory are needed", gitDir))
		return s
	}
	tips, err := readRefs(gitDir)
	if err != nil {
		s.Problems = append(s.Problems, fmt.Sprintf("%s: references: %v", gitDir, err))
		return s
	}
	if s.Kind == KindShared {
		sharedProjects(s, tips)
	} else {
		shadowProject(s, tips, marker)
	}
	return s
}

// readRefs lists every reference of a repository (loose, packed and HEAD)
// with the object it finally names. Symbolic references that lead nowhere,
// such as the unborn branch of a bare store's HEAD, are left out.
func readRefs(gitDir string) (tips []tip, err error) {
	err = withRepo(gitDir, func(st *filesystem.Storage) error {
		iter, err := st.IterReferences()
		if err != nil {
			return err
		}
		seen := map[plumbing.ReferenceName]bool{}
		return iter.ForEach(func(ref *plumbing.Reference) error {
			if seen[ref.Name()] {
				return nil
			}
			seen[ref.Name()] = true
			if ref.Type() == plumbing.SymbolicReference {
				resolved, err := storer.ResolveReference(st, ref.Name())
				if err != nil {
					return nil // unborn
				}
				tips = append(tips, tip{name: ref.Name().String() + " -> " + resolved.Name().String(), hash: resolved.Hash()})
				return nil
			}
			tips = append(tips, tip{name: ref.Name().String(), hash: ref.Hash()})
			return nil
		})
	})
	// HEAD first, then by name.
	slices.SortFunc(tips, func(a, b tip) int {
		ah, bh := strings.HasPrefix(a.name, "HEAD"), strings.HasPrefix(b.name, "HEAD")
		switch {
		case ah && !bh:
			return -1
		case bh && !ah:
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	return tips, err
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
func sharedProjects(s *Source, tips []tip) {
	for _, t := range tips {
		hash, ok := strings.CutPrefix(t.name, hermesRefs)
		if !ok {
			s.unowned = append(s.unowned, t)
			continue
		}
		rec, err := readRecord(filepath.Join(s.Path, "projects", hash+".json"))
		if err != nil {
			s.Problems = append(s.Problems, fmt.Sprintf("%s: %s: %v", s.Path, t.name, err))
			s.unowned = append(s.unowned, t)
			continue
		}
		p := Project{Workdir: string(rec.Workdir), Refs: []string{t.name}, tips: []plumbing.Hash{t.hash},
			Created: unixTime(rec.CreatedAt), LastTouch: unixTime(rec.LastTouch)}
		s.Projects = append(s.Projects, p)
	}
	slices.SortFunc(s.Projects, func(a, b Project) int { return strings.Compare(a.Workdir, b.Workdir) })
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
	workdir, err := checkWorkdir(string(rec.Workdir))
	rec.Workdir = casckpt.JSONPath(workdir)
	if err != nil {
		return rec, fmt.Errorf("project record %s: %w", filepath.Base(path), err)
	}
	return rec, nil
}

// shadowProject assigns every ref of a shadow repository to the project its
// HERMES_WORKDIR file names.
func shadowProject(s *Source, tips []tip, marker string) {
	b, err := os.ReadFile(marker)
	workdir := ""
	if err == nil {
		workdir, err = checkWorkdir(string(stripBOM(b)))
	} else if errors.Is(err, fs.ErrNotExist) {
		err = errors.New("no HERMES_WORKDIR file: the project's directory is unknown")
	}
	if err != nil {
		s.Problems = append(s.Problems, fmt.Sprintf("%s: %v", s.Dir, err))
		s.unowned = tips
		return
	}
	if len(tips) == 0 {
		return // no checkpoint was ever taken
	}
	p := Project{Workdir: workdir, Refs: []string{}}
	for _, t := range tips {
		p.Refs = append(p.Refs, t.name)
		p.tips = append(p.tips, t.hash)
	}
	s.Projects = append(s.Projects, p)
}

// checkWorkdir trims a recorded workdir and checks that it is absolute.
func checkWorkdir(w string) (string, error) {
	w = strings.TrimSpace(w)
	if w == "" || strings.ContainsRune(w, 0) || !filepath.IsAbs(w) {
		return "", fmt.Errorf("workdir %q is not an absolute path", w)
	}
	return filepath.Clean(w), nil
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

// isGitDir reports whether p looks like a git directory: a HEAD file and
// an objects directory.
func isGitDir(p string) bool {
	st, err := os.Lstat(filepath.Join(p, "HEAD"))
	return err == nil && st.Mode().IsRegular() && isDir(filepath.Join(p, "objects"))
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
