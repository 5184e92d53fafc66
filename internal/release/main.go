// Command release builds casckpt's release artifacts from one command, run
// from the repository root:
//
//	go run ./internal/release -out dist [-targets linux/amd64,darwin/arm64]
//
// For each target (by default linux, darwin and windows on amd64 and arm64)
// it builds the binaries (CGO_ENABLED=0, -trimpath, the version from the
// VERSION file and the commit from git stamped with -ldflags): casckpt
// with the tag casckpt_lean (no S3 client, go-git or MCP SDK: a shorter
// start-up) and casckpt-full, the whole program, which casckpt runs for a
// command line on an s3:// store and for status, migrate, clear-legacy
// and mcp; and it writes into the output directory, which must be
// empty or absent:
//   - casckpt_VERSION_OS_ARCH.tar.gz (.zip for windows): a directory of
//     that name holding both binaries, README.md, LICENSE and
//     LICENSE.textdiff;
//   - casckpt-VERSION-py3-none-PLATFORM.whl: the Python client with both
//     binaries inside, built by the client's own build backend
//     (clients/python/_build; needs python3);
//   - casckpt-OS-CPU-VERSION.tgz: the npm package @casckpt/OS-CPU holding
//     both binaries;
//
// then casckpt-VERSION.tgz, the npm package casckpt (the TypeScript
// client, clients/typescript, compiled by its npm run build; needs npm)
// with the casckpt command and an optional dependency on each platform
// package, and SHA256SUMS over every file (sha256sum -c reads it). A target that does not build fails the
// command with one line naming it and the compiler's first error.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	out := flag.String("out", "dist", "the output `directory` (empty or absent)")
	targets := flag.String("targets", strings.Join(targetNames(allTargets), ","), "the `os/arch` targets, comma-separated")
	flag.Parse()
	if flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	ts, err := parseTargets(*targets)
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(2)
	}
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
	r, err := run(context.Background(), config{root: root, out: *out, targets: ts, log: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
	fmt.Printf("casckpt %s (commit %s): %d files in %s\n", r.version, r.commit, len(r.files), *out)
}

// moduleRoot is the directory of the main module's go.mod (the repository
// root).
func moduleRoot() (string, error) {
	b, err := exec.Command("go", "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(b))
	if err != nil || gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not in the casckpt module (go env GOMOD: %q, %v): run it from the repository", gomod, err)
	}
	return filepath.Dir(gomod), nil
}
