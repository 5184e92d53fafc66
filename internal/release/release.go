package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// config is what one release is made of.
type config struct {
	root    string   // the repository root
	out     string   // the output directory, empty or absent
	targets []target // the platforms, each built and packed
	log     io.Writer
}

// result is what a release wrote.
type result struct {
	version, commit string
	files           []string // the names in the output directory, SHA256SUMS last
}

// stamp is the version and commit a release's binaries report.
type stamp struct{ version, commit string }

// run makes the release: every target's binary and the compiled
// TypeScript client, then per target its archive, wheel and npm platform
// package; then the npm main package and SHA256SUMS.
func run(ctx context.Context, c config) (result, error) {
	root, err := filepath.Abs(c.root)
	if err != nil {
		return result{}, err
	}
	c.root = root
	s, err := readStamp(ctx, c.root)
	if err != nil {
		return result{}, err
	}
	npm, err := readNpmManifest(c.root, s.version)
	if err != nil {
		return result{}, err
	}
	if err := emptyDir(c.out); err != nil {
		return result{}, err
	}
	work, err := os.MkdirTemp("", "casckpt-release-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(work)
	// Every target and the TypeScript client build before anything is
	// written, so one that does not build leaves the output directory
	// empty.
	bins := make([]binaries, len(c.targets))
	for i, t := range c.targets {
		fmt.Fprintf(c.log, "== build %s\n", t)
		dir := filepath.Join(work, t.goos+"-"+t.goarch)
		bins[i] = binaries{main: filepath.Join(dir, t.exe()), companion: filepath.Join(dir, t.companionExe())}
		if err := build(ctx, c.root, t, s, bins[i], c.log); err != nil {
			return result{}, err
		}
	}
	fmt.Fprintf(c.log, "== build the TypeScript client (%s)\n", npmDir)
	built := filepath.Join(work, "npm")
	if err := buildNpmClient(ctx, c.root, built, c.log); err != nil {
		return result{}, err
	}
	r := result{version: s.version, commit: s.commit}
	for i, t := range c.targets {
		files, err := pack(ctx, c, t, s.version, bins[i])
		if err != nil {
			return result{}, fmt.Errorf("%s: %w", t, err)
		}
		r.files = append(r.files, files...)
	}
	mainPkg, err := npmMainPackage(c.root, c.out, built, npm)
	if err != nil {
		return result{}, err
	}
	r.files = append(r.files, mainPkg)
	if err := writeSums(c.out, r.files); err != nil {
		return result{}, err
	}
	r.files = append(r.files, sumsName)
	return r, nil
}

// binaries are the paths of a target's two executables: casckpt, lean
// (the tag casckpt_lean: no S3 client, go-git or MCP SDK), whose
// start-up is shorter, and its companion, the whole program, which it runs
// for a command line on an s3:// store and for status, migrate,
// clear-legacy and mcp (see cmd/casckpt's handoff.go). Every archive and
// package carries both, side by side.
type binaries struct{ main, companion string }

// pack writes target t's archive, wheel and npm platform package of the
// binaries bin, and returns their names.
func pack(ctx context.Context, c config, t target, version string, bin binaries) ([]string, error) {
	archive, err := writeArchive(c.root, c.out, t, version, bin)
	if err != nil {
		return nil, err
	}
	wheel, err := buildWheel(ctx, c.root, c.out, t, bin)
	if err != nil {
		return nil, err
	}
	npm, err := npmPlatformPackage(c.root, c.out, t, version, bin)
	if err != nil {
		return nil, err
	}
	return []string{archive, wheel, npm}, nil
}

// versionRE is the form of VERSION: MAJOR.MINOR.PATCH, which Go, Python
// (PEP 440) and npm (semver) all read the same.
var versionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)

// readStamp reads the version from the VERSION file and the commit from
// git (HEAD, "-dirty" when tracked files differ from it); either missing
// is an error, never "unknown".
func readStamp(ctx context.Context, root string) (stamp, error) {
	b, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		return stamp{}, fmt.Errorf("no version: %w", err)
	}
	version := strings.TrimSpace(string(b))
	if !versionRE.MatchString(version) {
		return stamp{}, fmt.Errorf("VERSION is %q, not MAJOR.MINOR.PATCH", version)
	}
	head, err := git(ctx, root, "rev-parse", "HEAD")
	if err != nil {
		return stamp{}, fmt.Errorf("no commit: %w", err)
	}
	changes, err := git(ctx, root, "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return stamp{}, fmt.Errorf("no commit: %w", err)
	}
	if changes != "" {
		head += "-dirty"
	}
	return stamp{version, head}, nil
}

// git runs git in dir and returns its output, trimmed.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// emptyDir makes dir, or checks that it is an empty directory, so that
// SHA256SUMS names every file in it.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s is not empty: a release goes into an empty or new directory", dir)
	}
	return nil
}

// build compiles ./cmd/casckpt for t into bin's two executables, static,
// with the stamp: casckpt with the tag casckpt_lean, its companion
// without; when either fails, the compiler's output goes to log and the
// error is one line naming the target and the first error.
func build(ctx context.Context, root string, t target, s stamp, bin binaries, log io.Writer) error {
	ldflags := fmt.Sprintf("-s -w -X main.version=%s -X main.commit=%s", s.version, s.commit)
	for _, b := range []struct{ out, tags string }{{bin.main, "casckpt_lean"}, {bin.companion, ""}} {
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-tags", b.tags, "-ldflags", ldflags, "-o", b.out, "./cmd/casckpt")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.goos, "GOARCH="+t.goarch)
		out, err := cmd.CombinedOutput()
		if err != nil {
			log.Write(out)
			return fmt.Errorf("%s does not build: %s", t, firstError(out, err))
		}
	}
	return nil
}

// firstError is the first line of go build's output that is not a
// "# package" heading, else err.
func firstError(out []byte, err error) string {
	for line := range strings.Lines(string(out)) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			return line
		}
	}
	return err.Error()
}
