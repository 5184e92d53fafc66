package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/integrations/claudecode"
	"github.com/casckpt/casckpt/jsonapi"
)

// hookMissesShown is how many of the hook log's lines of the last day
// status shows.
const hookMissesShown = 5

func newStatusCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "show the store's size and projects (live, orphan or unreachable)",
		Args:  argsBetween(0, 0),
		RunE:  func(cmd *cobra.Command, _ []string) error { return runStatus(cmd.Context(), g) },
	}
}

// runStatus prints the store's size, projects, legacy Hermes stores,
// damaged objects and the hook's recent misses.
func runStatus(ctx context.Context, g *globals) error {
	store, err := g.open()
	if err != nil {
		return err
	}
	st, err := store.Status(ctx)
	if err != nil {
		return err
	}
	projects := make([]jsonapi.Project, 0, len(st.Projects))
	for _, p := range st.Projects {
		projects = append(projects, jsonapi.Project{Workdir: jsonapi.Path(p.Workdir), Machine: labelOrNull(p.Machine), Snapshots: p.Snapshots,
			CreatedAt: p.Created.Format(time.RFC3339), LastTouch: p.LastTouch.Format(time.RFC3339), State: string(p.State),
			Lifecycle: labelOrNull(p.Lifecycle), Test: p.Test,
			Bytes: p.Bytes, StoredBytes: p.StoredBytes, StoredRawBytes: p.StoredRawBytes})
	}
	legacy, err := g.legacyStores(ctx, store)
	if err != nil {
		return err
	}
	misses := claudecode.RecentMisses(g.hookDir(), g.now(), hookMissesShown)
	doc := jsonapi.Status{Store: jsonapi.Path(st.Store), Home: resolvedHome(g.home()), SizeBytes: st.SizeBytes, Projects: projects, Legacy: legacy,
		DamagedObjects: damagedObjectsJSON(st.DamagedObjects), HookMisses: misses}
	return g.emit(doc, func(w io.Writer) { printStatus(w, g, store, st, doc) })
}

// printStatus prints status st of store, whose document is doc, for
// people.
func printStatus(w io.Writer, g *globals, store *casckpt.Store, st casckpt.StatusResult, doc jsonapi.Status) {
	fmt.Fprintf(w, "store %s, %s, %s\n", st.Store, humanBytes(st.SizeBytes), countOf(int64(len(doc.Projects)), "project"))
	printDamagedObjects(w, st.DamagedObjects)
	for _, m := range doc.HookMisses {
		fmt.Fprintf(w, "hook miss: %s\n", oneLine(m))
	}
	for _, l := range doc.Legacy {
		state, what, flag := "not yet imported: run casckpt migrate", "legacy Hermes store", ""
		if l.Agent != "" {
			what, flag = l.Agent+" checkpoint store", " --from-agent "+l.Agent
		}
		if l.Migrated {
			state = "imported: casckpt clear-legacy" + flag + " frees it"
		} else {
			state += flag
		}
		fmt.Fprintf(w, "%s %s, %s, %s\n", what, l.Path, humanBytes(l.SizeBytes), state)
	}
	if len(doc.Projects) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	machine := map[bool]string{true: "MACHINE\t"}[store.Machine() != ""]
	fmt.Fprintln(tw, machine+"PROJECT\tSNAPSHOTS\tSIZE\tSTORED\tRATIO\tCREATED\tLAST TOUCH\tSTATE")
	for _, p := range st.Projects {
		if machine != "" {
			fmt.Fprintf(tw, "%s\t", p.Machine)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", oneLine(p.Workdir), count(int64(p.Snapshots)), humanBytes(p.Bytes), storedSize(p.StoredBytes),
			ratio(p.StoredRawBytes, p.StoredBytes), ago(p.Created, g.now()), ago(p.LastTouch, g.now()), stateText(p))
	}
	tw.Flush()
}

// stateText is a project's state for people, with its lifecycle and
// whether it is a test: "live", "live, completed, test".
func stateText(p casckpt.ProjectStatus) string {
	s := string(p.State)
	if p.Lifecycle != "" {
		s += ", " + p.Lifecycle
	}
	if p.Test {
		s += ", test"
	}
	return s
}

// resolvedHome is home (globals.home), symbolic links resolved as in a
// project's workdir; nil when unknown.
func resolvedHome(home string) *jsonapi.Path {
	if !filepath.IsAbs(home) {
		return nil
	}
	if real, err := filepath.EvalSymlinks(home); err == nil {
		home = real
	}
	p := jsonapi.Path(home)
	return &p
}
