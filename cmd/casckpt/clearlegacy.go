package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt/jsonapi"
	"github.com/casckpt/casckpt/migrate/hermes"
)

// clearLegacyOptions are the flags of clear-legacy.
type clearLegacyOptions struct {
	from      string
	fromAgent string
	path      string
	yes       bool
}

func newClearLegacyCommand(g *globals) *cobra.Command {
	var o clearLegacyOptions
	cmd := &cobra.Command{
		Use:   "clear-legacy",
		Short: "delete the legacy Hermes stores that are fully imported",
		Long: `clear-legacy deletes the legacy Hermes stores under --from whose every
commit has been imported, and names and keeps (exit 1) any that are not.
With --from-agent cline, roo, gemini or all it deletes instead that
agent's fully imported shadow repositories (at its default locations or
--path, as for migrate), never a task's conversation.`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error { return runClearLegacy(cmd.Context(), o, g) },
	}
	cmd.Flags().StringVar(&o.from, "from", "", "directory of the legacy checkpoints")
	cmd.Flags().StringVar(&o.fromAgent, "from-agent", "", "delete another agent's imported stores: cline, roo, gemini or all")
	cmd.Flags().StringVar(&o.path, "path", "", "with --from-agent: the directory to read instead of the default locations")
	cmd.Flags().BoolVar(&o.yes, "yes", false, "do not ask")
	return cmd
}

// runClearLegacy deletes the fully imported legacy stores, once
// confirmed, and fails (exit 1, after the document) when it kept any.
func runClearLegacy(ctx context.Context, o clearLegacyOptions, g *globals) error {
	store, err := g.open()
	if err != nil {
		return err
	}
	dir := g.legacyDir(o.from)
	var stores []agentStore
	if o.fromAgent != "" {
		if stores, err = g.agentStores(o.fromAgent, o.path); err != nil {
			return err
		}
		dir = o.fromAgent + "'s default locations"
		if o.path != "" {
			dir = o.path
		}
	} else if o.path != "" {
		return fmt.Errorf("--path goes with --from-agent; the Hermes stores are read from --from")
	}
	if !o.yes {
		if !g.stdinTerminal() {
			return fmt.Errorf("clear-legacy deletes the imported legacy stores under %s; add --yes to confirm (no terminal to ask on)", dir)
		}
		if !g.confirm(fmt.Sprintf("Delete the fully imported legacy stores under %s?", dir)) {
			return fmt.Errorf("clear-legacy cancelled; nothing was deleted")
		}
	}
	var deleted, kept []string
	var freed int64
	if o.fromAgent != "" {
		deleted, kept, freed, err = clearAgents(ctx, store, stores)
	} else {
		deleted, kept, freed, err = hermes.ClearLegacy(ctx, store, dir, false)
	}
	if err != nil {
		return err
	}
	if err := g.emit(jsonapi.ClearLegacy{Deleted: deleted, Kept: kept, BytesFreed: freed}, func(w io.Writer) {
		for _, d := range deleted {
			fmt.Fprintf(w, "deleted %s\n", d)
		}
		fmt.Fprintf(w, "freed %s\n", humanBytes(freed))
	}); err != nil {
		return err
	}
	if len(kept) > 0 {
		g.jsonDone = true
		return fmt.Errorf("kept %s: not every commit in it is imported; run casckpt migrate first", strings.Join(kept, ", "))
	}
	return nil
}
