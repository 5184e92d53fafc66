package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

func newLsCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ls [DIR] SNAP [PATH]",
		Short: "list the entries of snapshot SNAP (below PATH)",
		Long: `ls lists SNAP's files, links and directories; with PATH (relative to DIR,
default DIR itself), only that file or what is below that directory. Paths are shown relative to the project. With two arguments,
the first is DIR unless it is a snapshot reference. In JSON, mode is the
permission bits as a number (420 is 0644).`,
		Args: argsBetween(1, 3),
		RunE: func(cmd *cobra.Command, args []string) error { return runLs(cmd.Context(), g, args) },
	}
	addHereFlag(cmd, g)
	return cmd
}

// runLs lists the entries of the snapshot args ([DIR] SNAP [PATH]) name.
func runLs(ctx context.Context, g *globals, args []string) error {
	dir, rest := splitDir(args, 1)
	if len(rest) > 2 {
		return usagef("ls takes [DIR] SNAP [PATH]; %q is not a directory", args[0])
	}
	store, proj, err := g.openProject(ctx, dir)
	if err != nil {
		return err
	}
	p := proj.sub
	if len(rest) == 2 {
		p = proj.path(rest[1])
	}
	entries, err := store.LsPath(ctx, proj.dir, casckpt.Ref(rest[0]), p)
	if err != nil {
		return err
	}
	items := make(jsonapi.Ls, 0, len(entries))
	for _, e := range entries {
		items = append(items, jsonapi.LsItem{Path: jsonapi.Path(e.Path), Type: e.Entry.Kind.String(), Size: e.Entry.Size, Mode: e.Entry.Mode()})
	}
	return g.emit(items, func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		for i, it := range items {
			name := string(it.Path)
			switch it.Type {
			case "dir":
				name += "/"
			case "symlink":
				name += " -> " + entries[i].Entry.Target
			}
			fmt.Fprintf(tw, "%04o\t%s\t %s\n", it.Mode, humanBytes(it.Size), oneLine(name))
		}
		tw.Flush()
	})
}
