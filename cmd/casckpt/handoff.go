package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/casckpt/casckpt"
)

// A release's casckpt is built without s3:// stores (the tag
// casckpt_nobucket): the S3 client's package initialisation took about
// 2.4 ms of every process, a seventh of a turn. A command line that names
// an s3:// store runs in the companion instead, the build with them,
// shipped beside it; as git runs git-remote-https so that git itself does
// not link libcurl. A build without the tag (go build, go install) is
// whole and runs everything itself.
const companion = "casckpt-s3"

// namesBucket reports whether the command line args, in environment env,
// may name an s3:// store: --store s3://..., --store=s3://... or
// $CASCKPT_HOME. It leans to yes (a value of another flag that reads
// "--store", or an argument after "--"): the companion runs every
// command line, only slower, so a yes is never wrong, where a no would
// refuse the store.
func namesBucket(args []string, env func(string) string) bool {
	if casckpt.IsBucket(env("CASCKPT_HOME")) {
		return true
	}
	for i, a := range args {
		if a == "--store" && i+1 < len(args) && casckpt.IsBucket(args[i+1]) {
			return true
		}
		if v, ok := strings.CutPrefix(a, "--store="); ok && casckpt.IsBucket(v) {
			return true
		}
	}
	return false
}

// companionPath is where the companion is looked for: beside this
// executable, its symbolic links resolved (pip and npm run it through
// one).
func companionPath() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	name := companion
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	return filepath.Join(filepath.Dir(exe), name), nil
}

// noCompanion is the error of a build without s3:// stores asked to open
// one at location: the companion is missing, or is there but this process
// did not start as a command line naming the store (serve, ui and mcp run
// their requests in this process).
func noCompanion(location string) error {
	where, err := companionPath()
	if err != nil {
		where = companion + " beside this casckpt"
	}
	if fi, err := os.Stat(where); err == nil && fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s: this casckpt, built without s3:// stores, hands a command line naming one to %s as it starts: name the store when starting serve, ui or mcp, or run %s", casckpt.ErrRefused, location, where, where)
	}
	return fmt.Errorf("%w: %s: this casckpt runs %s for s3:// stores, and there is none: reinstall casckpt (its archives, pip and npm packages ship both), or use one built with s3:// stores (go build ./cmd/casckpt)", casckpt.ErrRefused, location, where)
}
