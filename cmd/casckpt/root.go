package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt/jsonapi"
)

func newRootPathCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "root PATH",
		Short: "print the project root of PATH",
		Long: `root prints the project root of PATH: the nearest directory, from PATH
itself (or its directory) upwards, that the store has snapshots of or that
holds .git, go.mod, package.json, pyproject.toml, Cargo.toml, Makefile,
pom.xml, .hg or Gemfile; else PATH's own directory. The walk never goes
above the home directory, and a marker in the home directory itself does not
count. JSON: {"root": DIR}.`,
		Args: argsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error { return runRootPath(cmd.Context(), g, args) },
	}
}

// runRootPath prints the project root of args' PATH.
func runRootPath(ctx context.Context, g *globals, args []string) error {
	store, err := g.open()
	if err != nil {
		return err
	}
	root, err := store.Root(ctx, args[0])
	if err != nil {
		return err
	}
	return g.emit(jsonapi.Root{Root: jsonapi.Path(root)}, func(w io.Writer) { fmt.Fprintln(w, root) })
}
