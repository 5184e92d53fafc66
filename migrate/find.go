package migrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Repo is a legacy repository found in a source directory.
type Repo struct {
	// Path is the repository's git directory.
	Path string
	// Unit is the top-level entry of the source directory holding it (the
	// shared store, a shadow repository, or a legacy-* folder): what
	// ClearLegacy deletes once all it holds is imported.
	Unit string
	// Shared is true for the shared store layout (refs/hermes/<hash>).
	Shared bool
	// Dir is the shadow repository's directory, holding HERMES_WORKDIR.
	Dir string
}

// project is one history to import.
type project struct {
	workdir   string
	created   time.Time
	lastTouch time.Time
	tip       plumbing.Hash
}

// Find lists the legacy repositories under the source directory from, in
// path order. A missing directory holds none.
func Find(from string) ([]Repo, error) {
	entries, err := os.ReadDir(from)
	if errors.Is(err, fs.ErrNotExist) {
		return []Repo{}, nil
	}
	if err != nil {
		return nil, err
	}
	repos := []Repo{}
	for _, e := range entries {
		if !e.IsDir() {
			continue // lock files, .gc-pending and the like
		}
		p := filepath.Join(from, e.Name())
		if strings.HasPrefix(e.Name(), "legacy-") {
			inner, err := os.ReadDir(p)
			if err != nil {
				continue
			}
			for _, ie := range inner {
				if r, ok := repoAt(filepath.Join(p, ie.Name()), ie); ok {
					r.Unit = p
					repos = append(repos, r)
				}
			}
			continue
		}
		if r, ok := repoAt(p, e); ok {
			r.Unit = p
			repos = append(repos, r)
		}
	}
	sort.Slice(repos, func(i, j int) bool { return repos[i].Path < repos[j].Path })
	return repos, nil
}

// repoAt recognises the shared store ("store") and shadow repositories (a
// directory with a HERMES_WORKDIR file, bare or with a .git inside).
func repoAt(p string, e fs.DirEntry) (Repo, bool) {
	if !e.IsDir() {
		return Repo{}, false
	}
	if e.Name() == "store" && isGitDir(p) {
		return Repo{Path: p, Shared: true}, true
	}
	if _, err := os.Stat(filepath.Join(p, "HERMES_WORKDIR")); err != nil {
		return Repo{}, false
	}
	if isGitDir(p) {
		return Repo{Path: p, Dir: p}, true
	}
	if isGitDir(filepath.Join(p, ".git")) {
		return Repo{Path: filepath.Join(p, ".git"), Dir: p}, true
	}
	return Repo{}, false
}

func isGitDir(p string) bool {
	_, err1 := os.Stat(filepath.Join(p, "HEAD"))
	st, err2 := os.Stat(filepath.Join(p, "objects"))
	return err1 == nil && err2 == nil && st.IsDir()
}

// open opens a repository's object and reference storage, read-only in
// use: nothing here writes to it.
func open(r Repo) *filesystem.Storage {
	return filesystem.NewStorageWithOptions(osfs.New(r.Path), cache.NewObjectLRU(64<<20), filesystem.Options{})
}

// projectMeta is a shared store's projects/<hash>.json.
type projectMeta struct {
	Workdir   string  `json:"workdir"`
	CreatedAt float64 `json:"created_at"`
	LastTouch float64 `json:"last_touch"`
}

func unixTime(sec float64) time.Time {
	return time.Unix(0, int64(sec*1e9))
}

// projects lists the histories in a repository. Problems with one project
// are returned as messages; the others are still listed.
func projects(r Repo, st *filesystem.Storage) ([]project, []string) {
	var out []project
	var problems []string
	if !r.Shared {
		b, err := os.ReadFile(filepath.Join(r.Dir, "HERMES_WORKDIR"))
		if err != nil {
			return nil, []string{fmt.Sprintf("%s: %v", r.Path, err)}
		}
		workdir := strings.TrimSpace(string(b))
		ref, err := storer.ResolveReference(st, plumbing.HEAD)
		if err != nil {
			return nil, []string{fmt.Sprintf("%s: no history on its current branch: %v", r.Path, err)}
		}
		return []project{{workdir: filepath.Clean(workdir), tip: ref.Hash()}}, nil
	}
	iter, err := st.IterReferences()
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: %v", r.Path, err)}
	}
	_ = iter.ForEach(func(ref *plumbing.Reference) error {
		name := ref.Name().String()
		hash, ok := strings.CutPrefix(name, "refs/hermes/")
		if !ok || ref.Type() != plumbing.HashReference {
			return nil
		}
		var meta projectMeta
		b, err := os.ReadFile(filepath.Join(r.Path, "projects", hash+".json"))
		if err == nil {
			err = json.Unmarshal(b, &meta)
		}
		if err == nil && meta.Workdir == "" {
			err = errors.New("no workdir")
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: project %s: projects/%s.json: %v", r.Path, hash, hash, err))
			return nil
		}
		out = append(out, project{workdir: filepath.Clean(meta.Workdir), created: unixTime(meta.CreatedAt),
			lastTouch: unixTime(meta.LastTouch), tip: ref.Hash()})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].workdir < out[j].workdir })
	return out, problems
}
