package gitimport

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Kind names the layout of a repository, as its Finder calls it (a
// reader's own words: "shared", "shadow"). This package only reports it.
type Kind string

// Ref is a reference of a repository and the object it finally names.
type Ref struct {
	// Name is the reference's name ("refs/heads/main"); a symbolic one is
	// written with the reference it points to ("HEAD -> refs/heads/main").
	Name string
	Hash plumbing.Hash
}

// Source is one git repository that a Finder found.
type Source struct {
	// Path is the repository's git directory (objects/, refs/, HEAD).
	Path string
	// Dir is the directory that was found: Path itself, or the directory
	// holding Path when the repository is a .git subdirectory.
	Dir string
	// Unit is the unit (Unit.Path) that holds the repository; Clear
	// deletes units whole.
	Unit string
	Kind Kind
	// Projects are the histories the repository holds, by workdir.
	Projects []Project
	// Problems describe what could not be read. Commits they hide are not
	// imported, and the unit is never reported as migrated.
	Problems []string
	// Unowned are references that belong to no project (their project is
	// unknown, or they are no project's). Their commits must be held by a
	// project for the unit to count as migrated.
	Unowned []Ref
}

// Project is one project's history in a repository.
type Project struct {
	// Workdir is the project directory as the repository records it (see
	// CleanWorkdir).
	Workdir string
	// Refs name the references holding the history (Ref.Name).
	Refs []string
	// Created and LastTouch are the times the source records for the
	// project; when zero, Run takes those of the oldest and newest commits.
	Created, LastTouch time.Time
	// Agent, when set, names the agent whose checkpoints the history holds
	// ("cline"): each snapshot's reason is "imported from <Agent>: " and
	// the commit message's first line, and a commit whose tree is its
	// first parent's (an empty commit) records no snapshot (its origin
	// names its parent's).
	Agent string
	// Label, when set, gives each commit's snapshot its session and turn
	// (each "" or a valid casckpt label): see casckpt.ImportSnapshot.
	Label func(c CommitInfo) (session, turn string)

	tips []plumbing.Hash
}

// CommitInfo is what Project.Label is told of a commit.
type CommitInfo struct {
	Hash string // in full, lower-case hex
	// Message is the first line of the commit message.
	Message string
	Time    time.Time
}

// NewProject is the project at workdir whose history is every commit
// reachable from refs.
func NewProject(workdir string, refs []Ref) Project {
	p := Project{Workdir: workdir, Refs: make([]string, 0, len(refs))}
	for _, r := range refs {
		p.Refs = append(p.Refs, r.Name)
		p.tips = append(p.tips, r.Hash)
	}
	return p
}

// Unit is what a Finder deletes whole once every commit in it is
// imported: a repository, or a directory of them.
type Unit struct {
	Path    string
	Sources []*Source
	// Problems describe what of the unit could not be read (a directory
	// that cannot be listed, say); they keep it from being migrated.
	Problems []string
}

// Finder finds an agent's git stores; a reader for an agent implements
// it (see the package documentation). Its methods write nothing and are
// called on the caller's goroutine.
type Finder interface {
	// Candidates lists the paths that may be units, in the order to
	// report them. A store that does not exist holds none (nil, nil); an
	// error (a directory that cannot be listed) ends the operation.
	Candidates() ([]string, error)
	// Read reads the unit at path, one of Candidates, with its sources'
	// references and projects; ok is false when path is no unit. What
	// cannot be read goes in the problems of the unit or of its sources.
	Read(path string) (u Unit, ok bool)
}

// Scan reads the units f finds, in its order.
func Scan(f Finder) ([]Unit, error) {
	paths, err := f.Candidates()
	if err != nil {
		return nil, err
	}
	var units []Unit
	for _, p := range paths {
		if u, ok := f.Read(p); ok {
			units = append(units, u)
		}
	}
	return units, nil
}

// ReadRefs lists every reference of the repository at gitDir (loose,
// packed and HEAD) with the object it finally names, HEAD first, then by
// name. Symbolic references that lead nowhere, such as the unborn branch
// of a bare repository's HEAD, are left out. It writes nothing.
func ReadRefs(gitDir string) (refs []Ref, err error) {
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
				refs = append(refs, Ref{Name: ref.Name().String() + " -> " + resolved.Name().String(), Hash: resolved.Hash()})
				return nil
			}
			refs = append(refs, Ref{Name: ref.Name().String(), Hash: ref.Hash()})
			return nil
		})
	})
	slices.SortFunc(refs, func(a, b Ref) int {
		ah, bh := strings.HasPrefix(a.Name, "HEAD"), strings.HasPrefix(b.Name, "HEAD")
		switch {
		case ah && !bh:
			return -1
		case bh && !ah:
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return refs, err
}

// ReadWorktree returns the core.worktree setting of the repository at
// gitDir ("" when it has none), reading its config file without git.
func ReadWorktree(gitDir string) (string, error) {
	var wt string
	err := withRepo(gitDir, func(st *filesystem.Storage) error {
		cfg, err := st.Config()
		if err != nil {
			return err
		}
		wt = cfg.Core.Worktree
		return nil
	})
	return wt, err
}

// IsGitDir reports whether p looks like a git directory: a HEAD file and
// an objects directory.
func IsGitDir(p string) bool {
	st, err := os.Lstat(filepath.Join(p, "HEAD"))
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	st, err = os.Stat(filepath.Join(p, "objects"))
	return err == nil && st.IsDir()
}

// CleanWorkdir trims a workdir as a source records it and checks that it
// is an absolute path.
func CleanWorkdir(w string) (string, error) {
	w = strings.TrimSpace(w)
	if w == "" || strings.ContainsRune(w, 0) || !filepath.IsAbs(w) {
		return "", fmt.Errorf("workdir %q is not an absolute path", w)
	}
	return filepath.Clean(w), nil
}
