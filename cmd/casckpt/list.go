package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

// listOptions are the flags of list.
type listOptions struct {
	n       int
	session string
	given   map[string]bool // the flags the command line gave
}

func newListCommand(g *globals) *cobra.Command {
	var o listOptions
	cmd := &cobra.Command{
		Use:   "list [DIR]",
		Short: "list the snapshots of DIR's project, newest first",
		Args:  argsBetween(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.given = changedFlags(cmd)
			return runList(cmd.Context(), o, g, args)
		},
	}
	cmd.Flags().IntVarP(&o.n, "number", "n", 0, "show the newest N only (0: all)")
	cmd.Flags().StringVar(&o.session, "session", "", "show only the snapshots of the agent's session `ID`")
	addHereFlag(cmd, g)
	return cmd
}

// runList lists the snapshots of the project at args' DIR.
func runList(ctx context.Context, o listOptions, g *globals, args []string) error {
	dir, session := ".", o.session
	if len(args) == 1 {
		dir = args[0]
	}
	if o.n < 0 {
		return usagef("-n takes a number of at least 0")
	}
	if err := checkLabel(o.given, "session", o.session); err != nil {
		return err
	}
	store, proj, err := g.openProject(ctx, dir)
	if err != nil {
		return err
	}
	dir = proj.dir
	list, err := store.ListSession(ctx, dir, session, o.n)
	if err != nil {
		return err
	}
	items := make(jsonapi.List, 0, len(list))
	labelled := false
	for _, e := range list {
		items = append(items, jsonapi.ListItem{
			ID: e.ID.String(), Number: e.Serial, ShortID: e.ID.Short(), Time: e.Time.Format(time.RFC3339), Reason: e.Reason,
			FilesChanged: e.FilesChanged, Insertions: e.Insertions, Deletions: e.Deletions, Pinned: e.Pinned,
			Session: labelOrNull(e.Session), Turn: labelOrNull(e.Turn), Title: labelOrNull(e.TurnTitle), Damaged: e.Damaged, Machine: g.readMachine(store),
			Bytes: e.Bytes, AddedBytes: e.AddedBytes, AddedRawBytes: e.AddedRawBytes,
		})
		labelled = labelled || e.Turn != ""
	}
	hint := ""
	switch {
	case len(list) == 0 && session != "":
		hint = "no snapshots of session " + oneLine(session)
	case len(list) == 0 && !g.json:
		if hint, err = enclosingProject(ctx, store, dir); err != nil {
			return err
		}
	}
	return g.emit(items, func(w io.Writer) {
		if m := g.readMachine(store); m != nil {
			fmt.Fprintf(w, "machine %s\n", *m)
		}
		if len(list) == 0 {
			fmt.Fprintln(w, hint)
			return
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		turnColumn := map[bool]string{true: "TURN\t"}
		fmt.Fprintln(tw, "@N\t#N\tID\tWHEN\tCHANGES\tSIZE\tADDED\tRATIO\t"+turnColumn[labelled]+"REASON")
		for _, e := range list {
			mark := ""
			if e.Pinned {
				mark = " (pinned)"
			}
			if e.Damaged {
				mark += " (" + g.paint(ansiRed, "DAMAGED") + ")"
			}
			turn := ""
			if labelled {
				turn = oneLine(e.Turn) + "\t"
			}
			if e.TurnTitle != "" {
				mark += fmt.Sprintf(" %q", e.TurnTitle)
			}
			fmt.Fprintf(tw, "@%d\t#%d\t%s\t%s\t%s +%s -%s\t%s\t%s\t%s\t%s%s%s\n", e.Number, e.Serial, e.ID.Short(), ago(e.Time, g.now()),
				countOf(e.FilesChanged, "file"), count(e.Insertions), count(e.Deletions), humanBytes(e.Bytes), storedSize(e.AddedBytes),
				ratio(e.AddedRawBytes, e.AddedBytes), turn, oneLine(e.Reason), mark)
		}
		tw.Flush()
	})
}

// enclosingProject says why dir has no snapshots for people: "no snapshots
// of DIR", and when a directory above it is a project with snapshots (the
// user is in a subdirectory), which one and how to list it.
func enclosingProject(ctx context.Context, store *casckpt.Store, dir string) (string, error) {
	abs, err := casckpt.Workdir(dir)
	if err != nil {
		return "no snapshots", nil // a directory that is gone: say no more
	}
	msg := "no snapshots of " + oneLine(abs)
	st, err := store.Status(ctx)
	if err != nil {
		return "", err
	}
	var best casckpt.ProjectStatus
	for _, p := range st.Projects {
		if p.Snapshots > 0 && p.Machine == store.Machine() && len(p.Workdir) > len(best.Workdir) && within(abs, p.Workdir) {
			best = p
		}
	}
	if best.Workdir == "" {
		return msg, nil
	}
	return fmt.Sprintf("%s; %s holds %s: casckpt list %s", msg, oneLine(best.Workdir),
		countOf(int64(best.Snapshots), "snapshot"), shellQuote(best.Workdir)), nil
}

// within reports whether path lies strictly inside dir.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
