package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
)

// redoOptions are the flags of redo.
type redoOptions struct {
	dryRun bool
}

func newRedoCommand(g *globals) *cobra.Command {
	var o redoOptions
	cmd := &cobra.Command{
		Use:   "redo [DIR]",
		Short: "re-apply the newest undo (undo --redo)",
		RunE:  func(cmd *cobra.Command, args []string) error { return runRedo(cmd.Context(), o, g, args) },
	}
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "show what would change and change nothing")
	addHereFlag(cmd, g)
	return cmd
}

// runRedo re-applies the newest undo in the project at args' DIR.
func runRedo(ctx context.Context, o redoOptions, g *globals, args []string) error {
	dir := "."
	switch len(args) {
	case 0:
	case 1:
		dir = args[0]
	default:
		return usagef("redo takes [DIR]: it re-applies the newest undo; unexpected argument %q", args[1])
	}
	return undoTurn(ctx, g, dir, "", casckpt.UndoOptions{DryRun: o.dryRun, Redo: true})
}
