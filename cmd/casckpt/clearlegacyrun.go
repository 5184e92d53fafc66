//go:build !casckpt_lean

package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/casckpt/casckpt/jsonapi"
	"github.com/casckpt/casckpt/migrate/hermes"
)

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
