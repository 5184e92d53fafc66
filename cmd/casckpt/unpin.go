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
	unpinUse   = "unpin [DIR] SNAP"
	unpinShort = "let the automatic rules drop snapshot SNAP again"
)

func newUnpinCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   unpinUse,
		Short: unpinShort,
		Long:  unpinShort + `. JSON: {"unpinned": ID}.`,
		Args:  argsBetween(1, 2),
		RunE:  func(cmd *cobra.Command, args []string) error { return runUnpin(cmd.Context(), g, args) },
	}
	addHereFlag(cmd, g)
	return cmd
}

// runUnpin unpins the snapshot args name.
func runUnpin(ctx context.Context, g *globals, args []string) error {
	id, err := pinOrUnpin(ctx, g, unpinUse, args, (*casckpt.Store).Unpin)
	if err != nil {
		return err
	}
	return g.emit(jsonapi.Unpin{Unpinned: id.String()}, func(w io.Writer) {
		fmt.Fprintf(w, "unpinned %s\n", id.Short())
	})
}
