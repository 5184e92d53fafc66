package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

func newForgetCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "forget [DIR] SNAP...",
		Short: "drop snapshots, pinned or not (gc returns their space)",
		Long:  `forget drops the named snapshots of the project. JSON: {"forgotten": [ID...]}.`,
		Args:  argsBetween(1, -1),
		RunE:  func(cmd *cobra.Command, args []string) error { return runForget(cmd.Context(), g, args) },
	}
	addHereFlag(cmd, g)
	return cmd
}

// runForget drops the snapshots args ([DIR] SNAP...) name.
func runForget(ctx context.Context, g *globals, args []string) error {
	dir, rest := splitDir(args, 1)
	store, proj, err := g.openProject(ctx, dir)
	if err != nil {
		return err
	}
	refs := make([]casckpt.Ref, len(rest))
	for i, r := range rest {
		refs[i] = casckpt.Ref(r)
	}
	ids, err := store.Forget(ctx, proj.dir, refs...)
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
}
