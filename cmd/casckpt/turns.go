package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

// turnsOptions are the flags of turns.
type turnsOptions struct {
	session string
	given   map[string]bool // the flags the command line gave
}

func newTurnsCommand(g *globals) *cobra.Command {
	var o turnsOptions
	cmd := &cobra.Command{
		Use:   "turns [DIR]",
		Short: "list the agent's turns in DIR's project, newest first, with what each changed",
		Args:  argsBetween(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.given = changedFlags(cmd)
			return runTurns(cmd.Context(), o, g, args)
		},
	}
	cmd.Flags().StringVar(&o.session, "session", "", "show only the turns of the agent's session `ID`")
	addHereFlag(cmd, g)
	return cmd
}

// runTurns lists the turns of the project at args' DIR.
func runTurns(ctx context.Context, o turnsOptions, g *globals, args []string) error {
	dir := "."
	if len(args) == 1 {
		dir = args[0]
	}
	if err := checkLabel(o.given, "session", o.session); err != nil {
		return err
	}
	store, proj, err := g.openProject(ctx, dir)
	if err != nil {
		return err
	}
	turns, err := store.Turns(ctx, proj.dir, o.session)
	if err != nil {
		return err
	}
	items := make(jsonapi.Turns, 0, len(turns))
	for _, t := range turns {
		item := jsonapi.Turn{Turn: t.ID, Session: labelOrNull(t.Session), Start: t.Start.String(), End: idOrNull(t.End),
			StartNumber: numberOrNull(t.StartAt), EndNumber: numberOrNull(t.EndAt),
			Started: t.Started.Format(time.RFC3339), FilesChanged: t.FilesChanged, Insertions: t.Insertions,
			Deletions: t.Deletions, Dropped: dropped(t), Damaged: t.Damaged, Machine: g.readMachine(store),
			Title: labelOrNull(t.Title), Interrupted: t.Interrupted, UndoneBy: idOrNull(t.UndoneBy)}
		if !t.Open() {
			item.Ended = labelOrNull(t.Ended.Format(time.RFC3339))
		}
		items = append(items, item)
	}
	return g.emit(items, func(w io.Writer) {
		if m := g.readMachine(store); m != nil {
			fmt.Fprintf(w, "machine %s\n", *m)
		}
		if len(turns) == 0 {
			fmt.Fprintln(w, "no turns")
			return
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "TURN\tSESSION\tSTARTED\tSTART\tEND\tCHANGES\tTITLE")
		for _, t := range turns {
			end, changes := "open", "-"
			if !t.Open() {
				end = placed(t.EndAt, t.End)
				changes = fmt.Sprintf("%s +%s -%s", countOf(t.FilesChanged, "file"), count(t.Insertions), count(t.Deletions))
			}
			for _, d := range dropped(t) {
				changes += " (" + d + " dropped)"
			}
			if t.Damaged {
				changes += " (" + g.paint(ansiRed, "DAMAGED") + ")"
			}
			if t.Interrupted {
				changes += " (interrupted)"
			}
			if !t.UndoneBy.IsZero() {
				changes += " (undone)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", oneLine(t.ID), oneLine(t.Session), ago(t.Started, g.now()), placed(t.StartAt, t.Start), end, changes, oneLine(t.Title))
		}
		tw.Flush()
	})
}

// numberOrNull is a snapshot's #N for JSON: null when it was dropped.
func numberOrNull(p casckpt.SnapshotPlace) *uint64 {
	if p.Serial == 0 {
		return nil
	}
	return &p.Serial
}

// placed is snapshot id for a table: "@N #N ID", or its ID alone when it
// was dropped.
func placed(p casckpt.SnapshotPlace, id casckpt.ID) string {
	if p.Serial == 0 {
		return id.Short()
	}
	return fmt.Sprintf("@%d #%d %s", p.Number, p.Serial, id.Short())
}

// dropped names the snapshots of t that were dropped.
func dropped(t casckpt.TurnInfo) []string {
	out := []string{}
	if t.StartDropped {
		out = append(out, "start")
	}
	if t.EndDropped {
		out = append(out, "end")
	}
	return out
}
