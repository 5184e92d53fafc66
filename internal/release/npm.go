package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	pathpkg "path"
	"path/filepath"
	"strings"
)

// npmDir is the npm main package's directory in the repository: the
// TypeScript client, which the release publishes as the package casckpt.
const npmDir = "clients/typescript"

// npmBin is the casckpt command of the package casckpt, in its dist: the
// launcher compiled from src/cli.ts, which runs the platform package's
// binary.
const npmBin = "dist/cli.js"

// npmTarball is the file name npm pack gives a package's tarball: the
// name without its scope's @ and with - for /, then the version.
func npmTarball(name, version string) string {
	return strings.NewReplacer("@", "", "/", "-").Replace(name) + "-" + version + ".tgz"
}

// npmPlatformPackage writes target t's npm package (as npm pack would):
// package.json with its os and cpu, the binaries as bin/casckpt[.exe] and
// bin/casckpt-full[.exe], and the licences; it returns the tarball's name.
func npmPlatformPackage(root, out string, t target, version string, bin binaries) (string, error) {
	manifest, err := json.MarshalIndent(map[string]any{
		"name":        t.npmPackage(),
		"version":     version,
		"description": fmt.Sprintf("The casckpt binary for %s (the casckpt package installs it)", t),
		"license":     "Apache-2.0 AND LGPL-2.1-or-later",
		"os":          []string{t.npmOS()},
		"cpu":         []string{t.npmCPU()},
		"files":       []string{"bin/" + t.exe(), "bin/" + t.companionExe(), "LICENSE", "LICENSE.textdiff"},
	}, "", "  ")
	if err != nil {
		return "", err
	}
	es, err := readEntries(root, "package/", map[string]string{"bin/" + t.exe(): bin.main, "bin/" + t.companionExe(): bin.companion})
	if err != nil {
		return "", err
	}
	es = append(es, entry{"package/package.json", append(manifest, '\n'), 0o644})
	sortEntries(es)
	name := npmTarball(t.npmPackage(), version)
	return name, writeTarGz(filepath.Join(out, name), es)
}

// npmManifest is the npm package casckpt's package.json as the release
// publishes it: the TypeScript client's, with the casckpt command and the
// platform packages added.
type npmManifest struct {
	fields  []npmField // every field, in the client's package.json's order
	name    string
	version string
	files   []string // what the package holds besides package.json: "dist", the compiled client, and files of npmDir
}

// An npmField is one top-level field of a package.json, its value as
// written (the order of "exports" conditions matters to Node and tsc).
type npmField struct {
	key   string
	value json.RawMessage
}

// readNpmManifest reads clients/typescript/package.json; its version must
// be VERSION's.
func readNpmManifest(root, version string) (npmManifest, error) {
	var m npmManifest
	raw, err := os.ReadFile(filepath.Join(root, npmDir, "package.json"))
	if err != nil {
		return m, err
	}
	var named struct {
		Name, Version string
		Files         []string
	}
	if err := json.Unmarshal(raw, &named); err != nil {
		return m, fmt.Errorf("%s/package.json: %w", npmDir, err)
	}
	m.name, m.version, m.files = named.Name, named.Version, named.Files
	if m.fields, err = readFields(raw); err != nil {
		return m, fmt.Errorf("%s/package.json: %w", npmDir, err)
	}
	if err := checkNpmVersion(m.version, version); err != nil {
		return m, fmt.Errorf("%s/package.json: %w", npmDir, err)
	}
	return m, nil
}

// readFields reads the top-level fields of the JSON object raw, in order.
func readFields(raw []byte) ([]npmField, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object (%v)", err)
	}
	var fields []npmField
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, err
		}
		f := npmField{key: key.(string)}
		if err := dec.Decode(&f.value); err != nil {
			return nil, err
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// checkNpmVersion fails unless the main package's version is VERSION's.
func checkNpmVersion(have, version string) error {
	if have != version {
		return fmt.Errorf("version %q, but VERSION says %q: set both", have, version)
	}
	return nil
}

// published is the package.json the release writes: the client's without
// its scripts (which build from source), with the casckpt command (npmBin)
// and one optional dependency per target of a full release on its
// platform package at the package's version, so that npm installs the
// binary of the platform it runs on.
func (m npmManifest) published() ([]byte, error) {
	deps := map[string]string{}
	for _, t := range allTargets {
		deps[t.npmPackage()] = m.version
	}
	added := map[string]any{"bin": map[string]string{"casckpt": npmBin}, "optionalDependencies": deps}
	var b bytes.Buffer
	write := func(key string, value []byte) {
		b.WriteByte(map[bool]byte{true: '{', false: ','}[b.Len() == 0])
		k, _ := json.Marshal(key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(value)
	}
	for _, f := range m.fields {
		if f.key != "scripts" && added[f.key] == nil {
			write(f.key, f.value)
		}
	}
	for _, key := range []string{"bin", "optionalDependencies"} {
		v, err := json.Marshal(added[key])
		if err != nil {
			return nil, err
		}
		write(key, v)
	}
	b.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// npmMainPackage writes the npm package casckpt: the published
// package.json, the files its "files" names (dist from built, the
// compiled client; the rest from clients/typescript), and the licences,
// with the casckpt command executable; it returns the tarball's name.
func npmMainPackage(root, out, built string, m npmManifest) (string, error) {
	manifest, err := m.published()
	if err != nil {
		return "", err
	}
	named := map[string]string{}
	for _, f := range m.files {
		from := filepath.Join(root, npmDir, f)
		if f == "dist" {
			from = filepath.Join(built, "dist")
		}
		if err := addTree(named, f, from); err != nil {
			return "", err
		}
	}
	if _, ok := named[npmBin]; !ok {
		return "", fmt.Errorf("%s/package.json: its files hold no %s, the casckpt command", npmDir, npmBin)
	}
	es, err := readEntries(root, "package/", named)
	if err != nil {
		return "", err
	}
	for i := range es {
		if es[i].name == "package/"+npmBin {
			es[i].mode = 0o755
		}
	}
	es = append(es, entry{"package/package.json", manifest, 0o644})
	sortEntries(es)
	name := npmTarball(m.name, m.version)
	return name, writeTarGz(filepath.Join(out, name), es)
}

// addTree adds to named the file at path as name, or each file under the
// directory at path as name/RELATIVE.
func addTree(named map[string]string, name, path string) error {
	return filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(path, p)
		if err != nil {
			return err
		}
		named[pathpkg.Join(name, filepath.ToSlash(rel))] = p
		return nil
	})
}

// buildNpmClient compiles the TypeScript client into built/dist with its
// own build script (npm run build), after npm ci where its compiler is not
// installed yet; npm's output goes to log when it fails.
func buildNpmClient(ctx context.Context, root, built string, log io.Writer) error {
	if _, err := exec.LookPath("npm"); err != nil {
		return errors.New("npm is not on PATH: the npm package casckpt is the TypeScript client, which the release compiles (install Node 20 or later)")
	}
	dir := filepath.Join(root, npmDir)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "typescript", "package.json")); err != nil {
		if err := npm(ctx, dir, log, "ci", "--no-audit", "--no-fund"); err != nil {
			return err
		}
	}
	return npm(ctx, dir, log, "run", "build", "--", "--outDir", filepath.Join(built, "dist"))
}

// npm runs npm with args in dir; when it fails, its output goes to log
// and the error is one line naming the command and npm's last line.
func npm(ctx context.Context, dir string, log io.Writer, args ...string) error {
	cmd := exec.CommandContext(ctx, "npm", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	log.Write(out)
	last := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(last, '\n'); i >= 0 {
		last = last[i+1:]
	}
	return fmt.Errorf("npm %s in %s: %v: %s", strings.Join(args, " "), npmDir, err, last)
}
