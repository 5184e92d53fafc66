package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt/jsonapi"
)

func newRecordWriteCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "record-write [DIR] PATH...",
		Short: "record that the agent has just written PATHs",
		Long: `record-write records in the project's write ledger that the agent has just
written each PATH (relative to DIR, or absolute inside it): what it holds now
is the agent's, and restore --safe puts it back while it is still so. A
missing PATH records a deletion; a link is never followed. With two or more
arguments, the first is DIR when it names an existing directory. A project
with no snapshot records nothing. JSON: {"recorded": int}.`,
		Args: argsBetween(1, -1),
		RunE: func(cmd *cobra.Command, args []string) error { return runRecordWrite(cmd.Context(), g, args) },
	}
	addHereFlag(cmd, g)
	return cmd
}

// runRecordWrite records the writes of args' PATHs in the project at its
// DIR.
func runRecordWrite(ctx context.Context, g *globals, args []string) error {
	dir, paths := ".", args
	if st, err := os.Stat(args[0]); len(args) > 1 && err == nil && st.IsDir() {
		dir, paths = args[0], args[1:]
	}
	store, proj, err := g.openProject(ctx, dir)
	if err != nil {
		return err
	}
	n, err := store.RecordWrite(ctx, proj.dir, proj.paths(paths)...)
	if err != nil {
		return err
	}
	return g.emit(jsonapi.RecordWrite{Recorded: n}, func(w io.Writer) {
		if n == 0 {
			fmt.Fprintln(w, "recorded nothing: the project has no snapshot yet")
			return
		}
		fmt.Fprintf(w, "recorded %s\n", countOf(int64(n), "write"))
	})
}
