package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

func newListCommand(g *globals) *cobra.Command {
	var n int
	cmd := &cobra.Command{
		Use:   "list [DIR]",
		Short: "list the snapshots of DIR's project, newest first",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			if n < 0 {
				return usagef("-n takes a number of at least 0")
			}
			return runList(cmd, g, dir, n)
		},
	}
	cmd.Flags().IntVarP(&n, "number", "n", 0, "show the newest N only (0: all)")
	return cmd
}

// listItemJSON is one element of the contract's list document.
type listItemJSON struct {
	ID           string `json:"id"`
	ShortID      string `json:"short_id"`
	Time         string `json:"time"`
	Reason       string `json:"reason"`
	FilesChanged int64  `json:"files_changed"`
	Insertions   int64  `json:"insertions"`
	Deletions    int64  `json:"deletions"`
	Pinned       bool   `json:"pinned"`
	Damaged      bool   `json:"damaged,omitempty"`
}

func runList(cmd *cobra.Command, g *globals, dir string, n int) error {
	store, err := g.open()
	if err != nil {
		return err
	}
	list, err := store.List(cmd.Context(), dir, n)
	if err != nil {
		return err
	}
	items := make([]listItemJSON, 0, len(list))
	for _, e := range list {
		items = append(items, listItemJSON{
			ID: e.ID.String(), ShortID: e.ID.Short(), Time: e.Time.Format(time.RFC3339), Reason: e.Reason,
			FilesChanged: e.FilesChanged, Insertions: e.Insertions, Deletions: e.Deletions, Pinned: e.Pinned, Damaged: e.Damaged,
		})
	}
	return g.emit(items, func(w io.Writer) {
		if len(list) == 0 {
			fmt.Fprintln(w, "no snapshots")
			return
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "#\tID\tWHEN\tCHANGES\tREASON")
		for i, e := range list {
			mark := ""
			if e.Pinned {
				mark = " (pinned)"
			}
			if e.Damaged {
				mark += " (DAMAGED)"
			}
			fmt.Fprintf(tw, "@%d\t%s\t%s\t%d files +%d -%d\t%s%s\n", i+1, e.ID.Short(), ago(e.Time, g.now()),
				e.FilesChanged, e.Insertions, e.Deletions, oneLine(e.Reason), mark)
		}
		tw.Flush()
	})
}

// oneLine keeps a reason on one line of a table.
func oneLine(s string) string {
	out := []rune{}
	for _, r := range s {
		if r == '\n' || r == '\t' || r == '\r' {
			r = ' '
		}
		out = append(out, r)
	}
	return string(out)
}
