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

// version is the release, when the build sets it
// (-ldflags "-X main.version=v1.2.3"); else the module's version from the
// build information.
var version string

// buildVersion reads the version, commit and Go release the program was
// built with; what the build did not record reads "unknown".
func buildVersion() jsonapi.Version {
	v := jsonapi.Version{Version: version, Commit: "unknown", Go: runtime.Version()}
	if info, ok := debug.ReadBuildInfo(); ok {
		v.Version = cmp.Or(v.Version, info.Main.Version)
		dirty := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty && v.Commit != "unknown" {
			v.Commit += "-dirty"
		}
	}
	v.Version = cmp.Or(v.Version, "unknown")
	return v
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
