package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

// undoOptions are the flags of undo.
type undoOptions struct {
	dryRun, redo bool
}

func newUndoCommand(g *globals) *cobra.Command {
	var o undoOptions
	cmd := &cobra.Command{
		Use:   "undo [DIR] [TURN]",
		Short: "revert the changes of one agent turn and keep everything done since",
		Long: `undo reverts what turn TURN (default: the newest ended turn not yet undone,
so that undo after undo walks back prompt by prompt) changed, like git
revert: a path still as the turn left it goes back to its state at the
turn's start; a text file changed since gets a three-way merge when it is
clean; anything else is left alone and reported as a conflict. It first
snapshots the current tree (reason "pre-undo: ..."; the stored copy of
what it overwrites is stored again first where damaged, as restore does),
and marks the turn undone (turns shows it). With one argument, it is DIR when it names an
existing directory, else TURN.

undo --redo (or redo) re-applies the newest undo: the turn it undid has
its changes made again by the same rules, after a pre-redo snapshot.`,
		RunE: func(cmd *cobra.Command, args []string) error { return runUndo(cmd.Context(), o, g, args) },
	}
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "show what would change and change nothing")
	cmd.Flags().BoolVar(&o.redo, "redo", false, "re-apply the newest undo instead (give no turn)")
	addHereFlag(cmd, g)
	return cmd
}

// runUndo undoes the turn args ([DIR] [TURN]) name, or with --redo
// re-applies the newest undo.
func runUndo(ctx context.Context, o undoOptions, g *globals, args []string) error {
	if o.redo {
		return runRedo(ctx, redoOptions{dryRun: o.dryRun}, g, args)
	}
	dir, turn := ".", ""
	switch len(args) {
	case 0:
	case 1:
		if st, err := os.Stat(args[0]); err == nil && st.IsDir() {
			dir = args[0]
		} else {
			turn = args[0]
		}
	case 2:
		dir, turn = args[0], args[1]
	default:
		return usagef("undo takes [DIR] [TURN]; unexpected argument %q", args[2])
	}
	if len(args) > 0 && args[len(args)-1] == "" {
		return usagef("undo: an empty argument names no directory or turn")
	}
	return undoTurn(ctx, g, dir, turn, casckpt.UndoOptions{DryRun: o.dryRun})
}

// undoTurn undoes turn (or redoes the newest undo, with opts.Redo) in
// the project at dir and prints what it did.
func undoTurn(ctx context.Context, g *globals, dir, turn string, opts casckpt.UndoOptions) error {
	store, proj, err := g.openProject(ctx, dir)
	if err != nil {
		return err
	}
	dryRun := opts.DryRun
	opts.BeforeApply = beforeApply
	res, err := store.Undo(ctx, proj.dir, turn, opts)
	if err != nil {
		if !dryRun {
			g.interrupted = "files may be partly reverted; if so, the newest snapshot (@1) holds the tree from before"
			if !res.PreUndoID.IsZero() {
				g.interrupted = "files may be partly reverted; snapshot " + res.PreUndoID.Short() + " holds the tree from before"
			}
		}
		return err
	}
	doc := jsonapi.Undo{Turn: res.Turn, PreUndoID: idOrNull(res.PreUndoID), DryRun: res.DryRun,
		Reverted: jsonapi.Paths(res.Reverted), Merged: jsonapi.Paths(res.Merged), Conflicts: []jsonapi.PathReason{}}
	for _, c := range res.Conflicts {
		doc.Conflicts = append(doc.Conflicts, jsonapi.PathReason{Path: jsonapi.Path(c.Path), Reason: c.Reason})
	}
	return g.emit(doc, func(w io.Writer) {
		for _, p := range res.Reverted {
			fmt.Fprintf(w, "reverted  %s\n", p)
		}
		for _, p := range res.Merged {
			fmt.Fprintf(w, "merged    %s\n", p)
		}
		for _, c := range res.Conflicts {
			fmt.Fprintf(w, "%s  %s: %s\n", g.paint(ansiRed, "conflict"), c.Path, c.Reason)
		}
		verb, would := "undid", "would undo"
		if opts.Redo {
			verb, would = "redid", "would redo"
		}
		if dryRun {
			verb = would
		}
		fmt.Fprintf(w, "%s turn %s: %s reverted, %s merged, %s left alone", verb, res.Turn,
			count(int64(len(res.Reverted))), count(int64(len(res.Merged))), count(int64(len(res.Conflicts))))
		if !res.PreUndoID.IsZero() {
			fmt.Fprintf(w, " (the tree before is snapshot %s)", res.PreUndoID.Short())
		}
		fmt.Fprintln(w)
	})
}
