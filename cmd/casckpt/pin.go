package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

const (
	pinUse   = "pin [DIR] SNAP"
	pinShort = "keep snapshot SNAP through every automatic rule"
)

func newPinCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   pinUse,
		Short: pinShort,
		Long:  pinShort + `. JSON: {"pinned": ID}.`,
		Args:  argsBetween(1, 2),
		RunE:  func(cmd *cobra.Command, args []string) error { return runPin(cmd.Context(), g, args) },
	}
	addHereFlag(cmd, g)
	return cmd
}

// runPin pins the snapshot args name.
func runPin(ctx context.Context, g *globals, args []string) error {
	id, err := pinOrUnpin(ctx, g, pinUse, args, (*casckpt.Store).Pin)
	if err != nil {
		return err
	}
	return g.emit(jsonapi.Pin{Pinned: id.String()}, func(w io.Writer) {
		fmt.Fprintf(w, "pinned %s\n", id.Short())
	})
}

// pinOrUnpin runs op, Store.Pin or Store.Unpin, on the snapshot that args
// ([DIR] SNAP of the command whose Use line is use) name.
func pinOrUnpin(ctx context.Context, g *globals, use string, args []string,
	op func(*casckpt.Store, context.Context, string, casckpt.Ref) (casckpt.ID, error)) (casckpt.ID, error) {
	dir, rest, err := splitDirExact(use, args, 1)
	if err != nil {
		return casckpt.ID{}, err
	}
	store, proj, err := g.openProject(ctx, dir)
	if err != nil {
		return casckpt.ID{}, err
	}
	return op(store, ctx, proj.dir, casckpt.Ref(rest[0]))
}
