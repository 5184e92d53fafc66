package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

// pruneOptions are the flags of prune.
type pruneOptions struct {
	retentionDays int
	completedDays int
	failedDays    int
	keepOrphans   bool
	maxSizeMB     int64
	auto          bool
	minHours      float64
	dryRun        bool
}

func newPruneCommand(g *globals) *cobra.Command {
	var o pruneOptions
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "drop orphan and stale projects, apply the size cap, collect garbage",
		Long: `prune drops orphan projects, whose directory was deleted (unless
--keep-orphans), and projects not touched for --retention-days, applies the
size cap, then collects garbage so the space is returned before it exits.
A project is an orphan only when its deletion is observable: its parent
directory is still the one it was at the project's last snapshot. A project
whose directory is out of sight otherwise (an unmounted volume, a missing or
replaced parent) is unreachable: prune keeps it unless it is stale. For a
project with a lifecycle (see policy) the lifecycle's rule replaces the stale
rule: completed projects go --completed-days after they completed, failed
ones --failed-days after (the project's own --retention-days first), test
ones at once, running ones never as orphans; a project with cleanup off by
no rule. Pinned snapshots keep their project. --auto skips the whole run if the last prune
was less than --min-interval-hours ago (for host start-up hooks).`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error { return runPrune(cmd.Context(), o, g) },
	}
	f := cmd.Flags()
	f.IntVar(&o.retentionDays, "retention-days", 7, "drop projects not touched for N days (0: never)")
	f.IntVar(&o.completedDays, "completed-days", 7, "drop completed projects N days after they completed (0: never)")
	f.IntVar(&o.failedDays, "failed-days", 30, "drop failed projects N days after they failed (0: never)")
	f.BoolVar(&o.keepOrphans, "keep-orphans", false, "keep projects whose directory was deleted")
	f.Int64Var(&o.maxSizeMB, "max-size-mb", 0, "size cap of the store in MiB (0: none)")
	f.BoolVar(&o.auto, "auto", false, "do nothing if the last prune ran less than --min-interval-hours ago")
	f.Float64Var(&o.minHours, "min-interval-hours", 24, "with --auto: hours between prunes")
	f.BoolVar(&o.dryRun, "dry-run", false, "show what would be dropped and change nothing")
	return cmd
}

// runPrune checks prune's flags, runs it and prints what it did.
func runPrune(ctx context.Context, o pruneOptions, g *globals) error {
	staleAfter, err := days("retention-days", o.retentionDays)
	if err != nil {
		return err
	}
	completedAfter, err := days("completed-days", o.completedDays)
	if err != nil {
		return err
	}
	failedAfter, err := days("failed-days", o.failedDays)
	if err != nil {
		return err
	}
	maxSize, err := mebibytes("max-size-mb", o.maxSizeMB, 0)
	if err != nil {
		return err
	}
	minInterval, err := hours("min-interval-hours", o.minHours)
	if err != nil {
		return err
	}
	store, err := g.open()
	if err != nil {
		return err
	}
	opts := casckpt.PruneOptions{StaleAfter: staleAfter, CompletedAfter: completedAfter, FailedAfter: failedAfter,
		KeepOrphans: o.keepOrphans, MaxSize: maxSize, DryRun: o.dryRun}
	if o.auto {
		opts.MinInterval = minInterval
	}
	res, err := store.Prune(ctx, opts)
	if err != nil {
		return err
	}
	if res.Skipped {
		return g.emit(jsonapi.PruneSkipped{Skipped: true}, func(w io.Writer) {
			fmt.Fprintf(w, "skipped: the last prune ran less than %g hours ago\n", o.minHours)
		})
	}
	if !res.CapMet {
		g.warn("the size cap cannot be met: pinned and newest snapshots need more room")
	}
	return emitPrune(g, store, res, o.dryRun)
}

// emitPrune prints what a prune that ran dropped and freed.
func emitPrune(g *globals, store *casckpt.Store, res casckpt.PruneResult, dryRun bool) error {
	drops := make([]jsonapi.Drop, 0, len(res.Drops))
	for _, d := range res.Drops {
		path, machine := projectOf(store, d.Project)
		drops = append(drops, jsonapi.Drop{Project: path, Machine: machine, ID: d.ID.String(), Rule: d.Rule})
	}
	doc := jsonapi.Prune{Scanned: res.Scanned, DeletedOrphan: res.DeletedOrphan, DeletedStale: res.DeletedStale,
		DeletedCompleted: res.DeletedCompleted, DeletedFailed: res.DeletedFailed, DeletedTest: res.DeletedTest,
		SnapshotsDropped: res.SnapshotsDropped, BytesFreed: res.BytesFreed, Drops: drops}
	return g.emit(doc, func(w io.Writer) {
		verb := "dropped"
		if dryRun {
			verb = "would drop"
		}
		for _, d := range drops {
			fmt.Fprintf(w, "%s %s of %s (%s)\n", verb, d.ID[:12], oneLine(string(d.Project)), ruleText[d.Rule])
		}
		fmt.Fprintf(w, "scanned %s; %s %s (%s and %s", countOf(int64(res.Scanned), "project"), verb,
			countOf(int64(res.SnapshotsDropped), "snapshot"), countOf(int64(res.DeletedOrphan), "orphan project"),
			countOf(int64(res.DeletedStale), "stale project"))
		for _, n := range []struct {
			n    int
			what string
		}{{res.DeletedCompleted, "completed project"}, {res.DeletedFailed, "failed project"}, {res.DeletedTest, "test project"}} {
			if n.n > 0 {
				fmt.Fprintf(w, ", %s", countOf(int64(n.n), n.what))
			}
		}
		fmt.Fprint(w, ")")
		if dryRun {
			fmt.Fprintln(w, "; nothing was changed (dry run)")
		} else {
			fmt.Fprintf(w, "; freed %s\n", humanBytes(res.BytesFreed))
		}
	})
}

// ruleText explains each rule of a prune for people.
var ruleText = map[string]string{
	"orphan":    "orphan: its directory was deleted",
	"stale":     "stale: the project was not touched for --retention-days",
	"size-cap":  "size-cap: the store is over --max-size-mb",
	"completed": "completed: the project completed more than --completed-days (or its --retention-days) ago",
	"failed":    "failed: the project failed more than --failed-days (or its --retention-days) ago",
	"test":      "test: a test project that finished",
}
