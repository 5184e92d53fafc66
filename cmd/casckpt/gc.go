package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt/jsonapi"
)

func newGCCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "gc",
		Short: "delete every stored object no snapshot reaches",
		Args:  argsBetween(0, 0),
		RunE:  func(cmd *cobra.Command, _ []string) error { return runGC(cmd.Context(), g) },
	}
}

// runGC collects the store's garbage and prints what it freed.
func runGC(ctx context.Context, g *globals) error {
	store, err := g.open()
	if err != nil {
		return err
	}
	res, err := store.GC(ctx)
	if err != nil {
		return err
	}
	return g.emit(jsonapi.GC{ObjectsDeleted: int64(res.ObjectsDeleted), BytesFreed: res.BytesFreed}, func(w io.Writer) {
		fmt.Fprintf(w, "deleted %s, freed %s\n", countOf(int64(res.ObjectsDeleted), "object"), humanBytes(res.BytesFreed))
	})
}
