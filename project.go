package casckpt

import (
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

// FindProjectRoot returns the directory of the project that path belongs
// to: the nearest ancestor
// directory (path itself included, if a directory) holding one of .git,
// go.mod, package.json, pyproject.toml, Cargo.toml, Makefile, pom.xml, .hg
// or Gemfile; else the directory of path (path itself if it is one).
func FindProjectRoot(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	start := abs
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		start = filepath.Dir(abs)
	}
	for d := start; ; d = filepath.Dir(d) {
		for _, m := range rootMarkers {
			if _, err := os.Lstat(filepath.Join(d, m)); err == nil {
				return d, nil
			}
		}
		if parent := filepath.Dir(d); parent == d {
			break
		}
	}
	return start, nil
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
