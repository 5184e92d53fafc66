package casckpt

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Workdir returns the workdir of the project in directory dir, the name
// the store knows it by: its absolute path with every symbolic link
// resolved. dir must be an existing directory.
func Workdir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("project %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("project %s: %w", dir, err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("project %s: %w", dir, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("project %s: %w: not a directory", dir, ErrRefused)
	}
	return real, nil
}

// knownWorkdir resolves dir as Workdir does, but also accepts a directory
// that no longer exists (its snapshots can still be listed and read), in
// which case its absolute path is its workdir.
func knownWorkdir(dir string) (string, error) {
	p, err := Workdir(dir)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return p, err
	}
	abs, aerr := filepath.Abs(dir)
	if aerr != nil {
		return "", err
	}
	return filepath.Clean(abs), nil
}

// rootMarkers are the names whose presence makes a directory a project root.
var rootMarkers = []string{".git", "go.mod", "package.json", "pyproject.toml", "Cargo.toml", "Makefile", "pom.xml", ".hg", "Gemfile"}

// Root returns the root of the project that path belongs to: the nearest
// directory, from path itself (if a directory) or its directory upwards,
// that the store has snapshots of (on a bucket store, that this machine
// snapshotted itself) or that holds one of .git, go.mod,
// package.json, pyproject.toml, Cargo.toml, Makefile, pom.xml, .hg or
// Gemfile; else the directory of path (path itself if a directory). The
// walk stops below the user's home directory (Options.HomeDir): a marker
// in the home directory does not make it a root. path need not exist. The
// root is symlink-resolved, as workdirs are.
func (s *Store) Root(ctx context.Context, path string) (string, error) {
	root, _, err := s.FindRoot(ctx, path)
	return root, err
}

// FindRoot is Root, and reports whether the root was found: a directory
// the store has snapshots of or one that holds a marker. When found is
// false, root is the directory of path, which no project claims (a
// scratch file's, say).
func (s *Store) FindRoot(ctx context.Context, path string) (root string, found bool, _ error) {
	start, err := walkStart(path)
	if err != nil {
		return "", false, err
	}
	root = start
	err = s.read(ctx, func(v view) error {
		for _, d := range ancestors(start, resolveExisting(s.opts.HomeDir)) {
			if (v.Tx.HasSnapshots(d) && s.actsOn(v.Tx, d)) || hasMarker(d) {
				root, found = d, true
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return "", false, fmt.Errorf("root of %s: %w", path, err)
	}
	return root, found, nil
}

// EnclosingProject finds the project that directory dir belongs to, as
// git finds a subdirectory's repository: dir itself when the store has
// snapshots of it, else the nearest directory above it that the store has
// snapshots of. sub is dir's place in it, slash-separated ("" for the
// project itself). found is false when no such project is known. A dir
// that does not exist is only ever its own project (a deleted project's
// snapshots can still be read), so that a mistyped name never acts on the
// project above it.
func (s *Store) EnclosingProject(ctx context.Context, dir string) (workdir, sub string, found bool, _ error) {
	start, err := knownWorkdir(dir)
	if err != nil {
		return "", "", false, err
	}
	candidates := ancestors(start, "")
	if st, err := os.Stat(start); err != nil || !st.IsDir() {
		candidates = candidates[:1]
	}
	err = s.read(ctx, func(v view) error {
		for _, d := range candidates {
			if v.Tx.HasSnapshots(d) && s.actsOn(v.Tx, d) {
				workdir, found = d, true
				return nil
			}
		}
		return nil
	})
	if err != nil || !found {
		return "", "", false, err
	}
	rel, err := filepath.Rel(workdir, start)
	if err != nil {
		return "", "", false, err
	}
	if rel == "." {
		rel = ""
	}
	return workdir, filepath.ToSlash(rel), true, nil
}

// ancestors returns the clean absolute directory start and those above
// it, nearest first, up to the file system root or, when stop is one of
// them, up to below stop.
func ancestors(start, stop string) []string {
	var out []string
	for d := start; d != stop; d = filepath.Dir(d) {
		out = append(out, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	return out
}

// walkStart returns where the root lookup of path begins: path itself if
// it is a directory, else its directory; absolute and symlink-resolved.
func walkStart(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("root of %s: %w", path, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		abs = filepath.Dir(abs)
	}
	return resolveExisting(abs), nil
}

// resolveExisting returns the clean absolute path p with the symbolic
// links of its longest existing prefix resolved (the rest, missing, is
// kept as written); "" stays "".
func resolveExisting(p string) string {
	if p == "" {
		return ""
	}
	p, _ = filepath.Abs(p)
	var missing []string
	for {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{real}, missing...)...)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(append([]string{p}, missing...)...)
		}
		missing = append([]string{filepath.Base(p)}, missing...)
		p = parent
	}
}

// hasMarker reports whether directory d holds one of rootMarkers.
func hasMarker(d string) bool {
	for _, m := range rootMarkers {
		if _, err := os.Lstat(filepath.Join(d, m)); err == nil {
			return true
		}
	}
	return false
}

// refuseSnapshotDir rejects directories never to be snapshotted whole: the
// file system root and the user's home directory.
func refuseSnapshotDir(workdir, home string) error {
	if workdir == string(filepath.Separator) {
		return fmt.Errorf("%w: %s is the root directory; snapshot a project directory instead", ErrRefused, workdir)
	}
	if home != "" {
		if real, err := filepath.EvalSymlinks(home); err == nil && real == workdir {
			return fmt.Errorf("%w: %s is your home directory; snapshot a project directory instead", ErrRefused, workdir)
		}
	}
	return nil
}
