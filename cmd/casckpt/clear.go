package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt/jsonapi"
)

// clearOptions are the flags of clear.
type clearOptions struct {
	yes bool
}

func newClearCommand(g *globals) *cobra.Command {
	var o clearOptions
	cmd := &cobra.Command{
		Use:   "clear",
		Short: "delete the whole store",
		Args:  argsBetween(0, 0),
		RunE:  func(cmd *cobra.Command, _ []string) error { return runClear(cmd.Context(), o, g) },
	}
	cmd.Flags().BoolVar(&o.yes, "yes", false, "do not ask")
	return cmd
}

// runClear deletes the store, once confirmed.
func runClear(ctx context.Context, o clearOptions, g *globals) error {
	store, err := g.open()
	if err != nil {
		return err
	}
	if !o.yes {
		if !g.stdinTerminal() {
			return fmt.Errorf("clear deletes every snapshot of every project; add --yes to confirm (no terminal to ask on)")
		}
		if !g.confirm(fmt.Sprintf("Delete the store %s with every snapshot of every project?", store.Location())) {
			return fmt.Errorf("clear cancelled; nothing was deleted")
		}
	}
	if err := store.Clear(ctx); err != nil {
		return err
	}
	return g.emit(jsonapi.Clear{Cleared: jsonapi.Path(store.Location())}, func(w io.Writer) {
		fmt.Fprintf(w, "deleted %s\n", store.Location())
	})
}
