package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// npmDir is the npm main package's directory in the repository.
const npmDir = "clients/npm/casckpt"

// npmTarball is the file name npm pack gives a package's tarball: the
// name without its scope's @ and with - for /, then the version.
func npmTarball(name, version string) string {
	return strings.NewReplacer("@", "", "/", "-").Replace(name) + "-" + version + ".tgz"
}

// npmPlatformPackage writes target t's npm package (as npm pack would):
// package.json with its os and cpu, the binary as bin/casckpt[.exe], and
// the licences; it returns the tarball's name.
func npmPlatformPackage(root, out string, t target, version, bin string) (string, error) {
	manifest, err := json.MarshalIndent(map[string]any{
		"name":        t.npmPackage(),
		"version":     version,
		"description": fmt.Sprintf("The casckpt binary for %s (the casckpt package installs it)", t),
		"license":     "Apache-2.0 AND LGPL-2.1-or-later",
		"os":          []string{t.npmOS()},
		"cpu":         []string{t.npmCPU()},
		"files":       []string{"bin/" + t.exe(), "LICENSE", "LICENSE.textdiff"},
	}, "", "  ")
	if err != nil {
		return "", err
	}
	es, err := readEntries(root, "package/", map[string]string{"bin/" + t.exe(): bin})
	if err != nil {
		return "", err
	}
	es = append(es, entry{"package/package.json", append(manifest, '\n'), 0o644})
	sortEntries(es)
	name := npmTarball(t.npmPackage(), version)
	return name, writeTarGz(filepath.Join(out, name), es)
}

// npmManifest is what the release reads of the npm main package's
// package.json.
type npmManifest struct {
	Name                 string
	Version              string
	Files                []string
	OptionalDependencies map[string]string
}

// readNpmManifest reads clients/npm/casckpt/package.json: its version and
// each platform package's must be version, and it must depend on every
// platform package of a full release.
func readNpmManifest(root, version string) (npmManifest, error) {
	var m npmManifest
	raw, err := os.ReadFile(filepath.Join(root, npmDir, "package.json"))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("%s/package.json: %w", npmDir, err)
	}
	if err := checkNpmManifest(m.Version, m.OptionalDependencies, version); err != nil {
		return m, fmt.Errorf("%s/package.json: %w", npmDir, err)
	}
	return m, nil
}

// npmMainPackage writes the npm package casckpt: clients/npm/casckpt's
// package.json and the files it lists, and the licences; it returns the
// tarball's name.
func npmMainPackage(root, out string, m npmManifest) (string, error) {
	dir := filepath.Join(root, npmDir)
	named := map[string]string{"package.json": filepath.Join(dir, "package.json")}
	for _, f := range m.Files {
		named[f] = filepath.Join(dir, f)
	}
	es, err := readEntries(root, "package/", named)
	if err != nil {
		return "", err
	}
	name := npmTarball(m.Name, m.Version)
	return name, writeTarGz(filepath.Join(out, name), es)
}

// checkNpmManifest fails unless the main package's version and its
// optional dependencies' are version, and they are one per target of a
// full release.
func checkNpmManifest(have string, deps map[string]string, version string) error {
	if have != version {
		return fmt.Errorf("version %q, but VERSION says %q: set both", have, version)
	}
	var want []string
	for _, t := range allTargets {
		want = append(want, t.npmPackage())
	}
	slices.Sort(want)
	if got := slices.Sorted(maps.Keys(deps)); !slices.Equal(got, want) {
		return fmt.Errorf("optionalDependencies %v, want %v", got, want)
	}
	for dep, v := range deps {
		if v != version {
			return fmt.Errorf("optionalDependencies: %s %q, but VERSION says %q", dep, v, version)
		}
	}
	return nil
}
