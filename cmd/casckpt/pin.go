package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

func newPinCommand(g *globals, pin bool) *cobra.Command {
	use, short, key := "pin [DIR] SNAP", "keep snapshot SNAP through every automatic rule", "pinned"
	if !pin {
		use, short, key = "unpin [DIR] SNAP", "let the automatic rules drop snapshot SNAP again", "unpinned"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  short + `. JSON: {"` + key + `": ID}.`,
		Args:  argsBetween(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, rest, err := splitDirExact(cmd, args, 1)
			if err != nil {
				return err
			}
			store, proj, err := g.openProject(cmd.Context(), dir)
			if err != nil {
				return err
			}
			pinOrUnpin := store.Unpin
			if pin {
				pinOrUnpin = store.Pin
			}
			id, err := pinOrUnpin(cmd.Context(), proj.dir, casckpt.Ref(rest[0]))
			if err != nil {
				return err
			}
			var doc jsonapi.Doc = jsonapi.Pin{Pinned: id.String()}
			if !pin {
				doc = jsonapi.Unpin{Unpinned: id.String()}
			}
			return g.emit(doc, func(w io.Writer) {
				fmt.Fprintf(w, "%s %s\n", key, id.Short())
			})
		},
	}
	addHereFlag(cmd, g)
	return cmd
}

func newForgetCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "forget [DIR] SNAP...",
		Short: "drop snapshots, pinned or not (gc returns their space)",
		Long:  `forget drops the named snapshots of the project. JSON: {"forgotten": [ID...]}.`,
		Args:  argsBetween(1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, rest := splitDir(args, 1)
			store, proj, err := g.openProject(cmd.Context(), dir)
			if err != nil {
				return err
			}
			refs := make([]casckpt.Ref, len(rest))
			for i, r := range rest {
				refs[i] = casckpt.Ref(r)
			}
			ids, err := store.Forget(cmd.Context(), proj.dir, refs...)
			if err != nil {
				return err
			}
			out := make([]string, len(ids))
			for i, id := range ids {
				out[i] = id.String()
			}
			return g.emit(jsonapi.Forget{Forgotten: out}, func(w io.Writer) {
				for _, id := range ids {
					fmt.Fprintf(w, "forgot %s\n", id.Short())
				}
			})
		},
	}
	addHereFlag(cmd, g)
	return cmd
}

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
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := g.open()
			if err != nil {
				return err
			}
			root, err := store.Root(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return g.emit(jsonapi.Root{Root: jsonapi.Path(root)}, func(w io.Writer) { fmt.Fprintln(w, root) })
		},
	}
}
