package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt/jsonapi"
)

func newLogCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "log [DIR] PATH",
		Short: "list the snapshots in which PATH changed, newest first",
		Long: `log lists the snapshots of DIR's project in which PATH (a file, link or
directory, relative to DIR or absolute inside it) changed, newest first:
whether it was added, modified, deleted or changed type since the snapshot
before, and the lines inserted and deleted (for a directory, in the files
below it). A path that no snapshot holds has an empty log.`,
		Args: argsBetween(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error { return runLog(cmd.Context(), g, args) },
	}
	addHereFlag(cmd, g)
	return cmd
}

// runLog lists the snapshots in which args' PATH changed.
func runLog(ctx context.Context, g *globals, args []string) error {
	dir, p := ".", args[0]
	if len(args) == 2 {
		dir, p = args[0], args[1]
	}
	store, proj, err := g.openProject(ctx, dir)
	if err != nil {
		return err
	}
	log, err := store.FileLog(ctx, proj.dir, proj.path(p))
	if err != nil {
		return err
	}
	items := make(jsonapi.Log, 0, len(log))
	for _, e := range log {
		items = append(items, jsonapi.LogItem{
			ID: e.ID.String(), Number: e.Serial, ShortID: e.ID.Short(), Time: e.Time.Format(time.RFC3339), Reason: e.Reason,
			Status: string(e.Status), Insertions: e.Insertions, Deletions: e.Deletions, Turn: labelOrNull(e.Turn), Session: labelOrNull(e.Session),
		})
	}
	return g.emit(items, func(w io.Writer) {
		if len(log) == 0 {
			fmt.Fprintf(w, "no snapshot holds %s\n", oneLine(p))
			return
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "@N\t#N\tID\tWHEN\tSTATUS\tLINES\tREASON")
		for _, e := range log {
			fmt.Fprintf(tw, "@%d\t#%d\t%s\t%s\t%s\t+%s -%s\t%s\n", e.Number, e.Serial, e.ID.Short(), ago(e.Time, g.now()),
				e.Status, count(e.Insertions), count(e.Deletions), oneLine(e.Reason))
		}
		tw.Flush()
	})
}
