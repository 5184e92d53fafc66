package main

import (
	"cmp"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt/jsonapi"
)

// version and commit are the release and its commit, when the build sets
// them (-ldflags "-X main.version=1.2.3 -X main.commit=0a1b2c...", as
// go run ./internal/release does); else the module's version and the
// commit from the build information.
var version, commit string

// buildVersion reads the version, commit and Go release the program was
// built with; what the build did not record reads "unknown".
func buildVersion() jsonapi.Version {
	v := jsonapi.Version{Version: version, Commit: commit, Go: runtime.Version()}
	if info, ok := debug.ReadBuildInfo(); ok {
		v.Version = cmp.Or(v.Version, info.Main.Version)
		if v.Commit == "" {
			v.Commit = vcsCommit(info)
		}
	}
	v.Version = cmp.Or(v.Version, "unknown")
	v.Commit = cmp.Or(v.Commit, "unknown")
	return v
}

// vcsCommit is the commit the go command recorded (-buildvcs), ending in
// "-dirty" for modified sources; "" when it recorded none.
func vcsCommit(info *debug.BuildInfo) string {
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && rev != "" {
		rev += "-dirty"
	}
	return rev
}

// runVersion prints the version for people or as JSON (version, and
// casckpt --version).
func runVersion(g *globals) error {
	v := buildVersion()
	return g.emit(v, func(w io.Writer) {
		fmt.Fprintf(w, "casckpt %s (commit %s, %s)\n", v.Version, v.Commit, v.Go)
	})
}

func newVersionCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print the version, commit and Go release of this build",
		Long:  `version prints the version, commit and Go release of this build (also casckpt --version). JSON: {"version", "commit", "go"}.`,
		Args:  argsBetween(0, 0),
		RunE:  func(*cobra.Command, []string) error { return runVersion(g) },
	}
}
