package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
	"github.com/casckpt/casckpt/migrate/hermes"
)

func newGCCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "gc",
		Short: "delete every stored object no snapshot reaches",
		Args:  argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := g.open()
			if err != nil {
				return err
			}
			res, err := store.GC(cmd.Context())
			if err != nil {
				return err
			}
			return g.emit(jsonapi.GC{ObjectsDeleted: int64(res.ObjectsDeleted), BytesFreed: res.BytesFreed}, func(w io.Writer) {
				fmt.Fprintf(w, "deleted %s, freed %s\n", countOf(int64(res.ObjectsDeleted), "object"), humanBytes(res.BytesFreed))
			})
		},
	}
}

type pruneOptions struct {
	retentionDays int
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
replaced parent) is unreachable: prune keeps it unless it is stale. Pinned
snapshots keep their project. --auto skips the whole run if the last prune
was less than --min-interval-hours ago (for host start-up hooks).`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error { return runPrune(cmd, g, o) },
	}
	f := cmd.Flags()
	f.IntVar(&o.retentionDays, "retention-days", 7, "drop projects not touched for N days (0: never)")
	f.BoolVar(&o.keepOrphans, "keep-orphans", false, "keep projects whose directory was deleted")
	f.Int64Var(&o.maxSizeMB, "max-size-mb", 0, "size cap of the store in MiB (0: none)")
	f.BoolVar(&o.auto, "auto", false, "do nothing if the last prune ran less than --min-interval-hours ago")
	f.Float64Var(&o.minHours, "min-interval-hours", 24, "with --auto: hours between prunes")
	f.BoolVar(&o.dryRun, "dry-run", false, "show what would be dropped and change nothing")
	return cmd
}

// runPrune checks prune's flags, runs it and prints what it did.
func runPrune(cmd *cobra.Command, g *globals, o pruneOptions) error {
	staleAfter, err := days("retention-days", o.retentionDays)
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
	opts := casckpt.PruneOptions{StaleAfter: staleAfter, KeepOrphans: o.keepOrphans, MaxSize: maxSize, DryRun: o.dryRun}
	if o.auto {
		opts.MinInterval = minInterval
	}
	res, err := store.Prune(cmd.Context(), opts)
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
		SnapshotsDropped: res.SnapshotsDropped, BytesFreed: res.BytesFreed, Drops: drops}
	return g.emit(doc, func(w io.Writer) {
		verb := "dropped"
		if dryRun {
			verb = "would drop"
		}
		for _, d := range drops {
			fmt.Fprintf(w, "%s %s of %s (%s)\n", verb, d.ID[:12], oneLine(string(d.Project)), ruleText[d.Rule])
		}
		fmt.Fprintf(w, "scanned %s; %s %s (%s and %s)", countOf(int64(res.Scanned), "project"), verb,
			countOf(int64(res.SnapshotsDropped), "snapshot"), countOf(int64(res.DeletedOrphan), "orphan project"),
			countOf(int64(res.DeletedStale), "stale project"))
		if dryRun {
			fmt.Fprintln(w, "; nothing was changed (dry run)")
		} else {
			fmt.Fprintf(w, "; freed %s\n", humanBytes(res.BytesFreed))
		}
	})
}

// ruleText explains each rule of a prune for people.
var ruleText = map[string]string{
	"orphan":   "orphan: its directory was deleted",
	"stale":    "stale: the project was not touched for --retention-days",
	"size-cap": "size-cap: the store is over --max-size-mb",
}

func newStatusCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "show the store's size and projects (live, orphan or unreachable)",
		Args:  argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := g.open()
			if err != nil {
				return err
			}
			st, err := store.Status(cmd.Context())
			if err != nil {
				return err
			}
			projects := make([]jsonapi.Project, 0, len(st.Projects))
			for _, p := range st.Projects {
				projects = append(projects, jsonapi.Project{Workdir: jsonapi.Path(p.Workdir), Machine: labelOrNull(p.Machine), Snapshots: p.Snapshots,
					CreatedAt: p.Created.Format(time.RFC3339), LastTouch: p.LastTouch.Format(time.RFC3339), State: string(p.State)})
			}
			found, err := hermes.Status(cmd.Context(), store, g.legacyDir(""))
			if err != nil {
				return err
			}
			legacy := make([]jsonapi.Legacy, 0, len(found))
			for _, l := range found {
				legacy = append(legacy, jsonapi.Legacy{Path: jsonapi.Path(l.Path), SizeBytes: l.SizeBytes, Migrated: l.Migrated})
			}
			misses := g.hookMisses(hookMissesShown)
			doc := jsonapi.Status{Store: jsonapi.Path(st.Store), SizeBytes: st.SizeBytes, Projects: projects, Legacy: legacy,
				DamagedObjects: damagedObjectsJSON(st.DamagedObjects), HookMisses: misses}
			return g.emit(doc, func(w io.Writer) {
				fmt.Fprintf(w, "store %s, %s, %s\n", st.Store, humanBytes(st.SizeBytes), countOf(int64(len(projects)), "project"))
				printDamagedObjects(w, st.DamagedObjects)
				for _, m := range misses {
					fmt.Fprintf(w, "hook miss: %s\n", oneLine(m))
				}
				for _, l := range legacy {
					state := "not yet imported: run casckpt migrate"
					if l.Migrated {
						state = "imported: casckpt clear-legacy frees it"
					}
					fmt.Fprintf(w, "legacy Hermes store %s, %s, %s\n", l.Path, humanBytes(l.SizeBytes), state)
				}
				if len(projects) == 0 {
					return
				}
				tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
				machine := map[bool]string{true: "MACHINE\t"}[store.Machine() != ""]
				fmt.Fprintln(tw, machine+"PROJECT\tSNAPSHOTS\tCREATED\tLAST TOUCH\tSTATE")
				for _, p := range st.Projects {
					if machine != "" {
						fmt.Fprintf(tw, "%s\t", p.Machine)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", oneLine(p.Workdir), count(int64(p.Snapshots)), ago(p.Created, g.now()), ago(p.LastTouch, g.now()), p.State)
				}
				tw.Flush()
			})
		},
	}
}

// damagedObjectsJSON returns the JSON of objects, never nil.
func damagedObjectsJSON(objects []casckpt.DamagedObject) []jsonapi.ObjectReason {
	out := make([]jsonapi.ObjectReason, 0, len(objects))
	for _, o := range objects {
		out = append(out, jsonapi.ObjectReason{Key: o.Key, Reason: o.Reason})
	}
	return out
}

// printDamagedObjects prints a line per damaged object of a bucket store.
func printDamagedObjects(w io.Writer, objects []casckpt.DamagedObject) {
	for _, o := range objects {
		fmt.Fprintf(w, "DAMAGED OBJECT %s: %s\n", oneLine(o.Key), oneLine(o.Reason))
	}
}

func newVerifyCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "verify",
		Short: "check every snapshot's trees and data against their hashes",
		Args:  argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := g.open()
			if err != nil {
				return err
			}
			res, err := store.Verify(cmd.Context())
			if err != nil {
				return err
			}
			damaged := make([]jsonapi.Damaged, 0, len(res.Damaged))
			for _, d := range res.Damaged {
				path, machine := projectOf(store, d.Project)
				damaged = append(damaged, jsonapi.Damaged{Project: path, Machine: machine, ID: d.ID.String(), Reason: d.Reason})
			}
			rejected := make([]jsonapi.ObjectReason, 0, len(res.Rejected))
			for _, r := range res.Rejected {
				rejected = append(rejected, jsonapi.ObjectReason(r))
			}
			doc := jsonapi.Verify{SnapshotsChecked: res.SnapshotsChecked, ObjectsChecked: res.ObjectsChecked, Damaged: damaged, Rejected: rejected,
				DamagedObjects: damagedObjectsJSON(res.DamagedObjects)}
			if err := g.emit(doc, func(w io.Writer) {
				for _, d := range damaged {
					fmt.Fprintf(w, "%s %s %s: %s\n", g.paint(ansiRed, "DAMAGED"), oneLine(string(d.Project)), d.ID[:12], oneLine(d.Reason))
				}
				for _, r := range res.Rejected {
					fmt.Fprintf(w, "REJECTED %s: %s\n", oneLine(r.Key), r.Reason)
				}
				printDamagedObjects(w, res.DamagedObjects)
				fmt.Fprintf(w, "checked %s, %s: %s damaged\n", countOf(int64(res.SnapshotsChecked), "snapshot"), countOf(int64(res.ObjectsChecked), "object"), count(int64(len(res.Damaged))))
			}); err != nil {
				return err
			}
			if len(res.Damaged) > 0 {
				g.jsonDone = true
				return fmt.Errorf("%s; restore refuses them and names the newest intact one; casckpt repair, then a snapshot of files that still hold the lost data, stores it again; forget removes them", countOf(int64(len(res.Damaged)), "damaged snapshot"))
			}
			if len(res.Rejected) > 0 {
				g.jsonDone = true
				return fmt.Errorf("%s in the bucket carry no valid fleet signature and are ignored (gc refuses while a commit is among them): unless they predate CASCKPT_FLEET_KEY, someone without the key wrote them (see docs/bucket.md, Trust)", countOf(int64(len(res.Rejected)), "object"))
			}
			if len(res.DamagedObjects) > 0 {
				g.jsonDone = true
				return fmt.Errorf("%s in the bucket, skipped by every command: delete them from the bucket once you have looked, then run casckpt repair", countOf(int64(len(res.DamagedObjects)), "damaged object"))
			}
			return nil
		},
	}
}

// projectOf splits the name under which store knows a project into its
// path and, on a bucket store, its machine (nil for a directory's).
func projectOf(store *casckpt.Store, workdir string) (jsonapi.Path, *string) {
	m, path := casckpt.SplitWorkdir(workdir)
	if m == "" {
		m = store.Machine()
	}
	return jsonapi.Path(path), labelOrNull(m)
}

func newRepairCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "repair",
		Short: "rebuild the store's database from the packs",
		Long: `repair rebuilds the store's database (casckpt.db) from the packs when it
is damaged or lost. Every pack is read and each object checked against its
hash; the snapshot records are rebuilt from the backup of its record that
every snapshot stores in its pack, keeping the pins and numbering the old
database still holds. Snapshots dropped earlier stay out when the old
database still says so; if it cannot, they may come back (forget them
again). A snapshot whose commit a crash cut short comes back too, whole.
The old database is kept beside the new one. Run verify afterwards.`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := g.open()
			if err != nil {
				return err
			}
			res, err := store.Repair(cmd.Context())
			if err != nil {
				return err
			}
			doc := jsonapi.Repair{PacksRead: res.PacksRead, ObjectsIndexed: res.ObjectsIndexed,
				DamagedPacks: orEmpty(res.DamagedPacks), UnreadablePacks: orEmpty(res.UnreadablePacks),
				Projects: res.Projects, Snapshots: res.Snapshots, Turns: res.Turns, FromOldDatabase: res.FromOldDatabase, OldDatabase: labelOrNull(res.OldDatabase)}
			for _, p := range res.DamagedPacks {
				g.warn(fmt.Sprintf("pack %s is damaged: the objects that could be read are indexed", p))
			}
			for _, p := range res.UnreadablePacks {
				g.warn(fmt.Sprintf("pack %s has nothing readable: set aside as %s.damaged", p, p))
			}
			return g.emit(doc, func(w io.Writer) {
				fmt.Fprintf(w, "rebuilt the database: %s of %s (%s from the old database, %s from the backups in the packs), %s, %s in %s\n",
					countOf(int64(res.Snapshots), "snapshot"), countOf(int64(res.Projects), "project"), count(int64(res.FromOldDatabase)),
					count(int64(res.Snapshots-res.FromOldDatabase)), countOf(int64(res.Turns), "turn"), countOf(int64(res.ObjectsIndexed), "object"), countOf(int64(res.PacksRead), "pack"))
				if res.OldDatabase != "" {
					fmt.Fprintf(w, "the old database is kept as %s: delete it once casckpt verify is clean\n", oneLine(res.OldDatabase))
				}
			})
		},
	}
}

// orEmpty makes a nil list encode as [], not null.
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func newClearCommand(g *globals) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "clear",
		Short: "delete the whole store",
		Args:  argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := g.open()
			if err != nil {
				return err
			}
			if !yes {
				if !g.stdinTerminal() {
					return fmt.Errorf("clear deletes every snapshot of every project; add --yes to confirm (no terminal to ask on)")
				}
				fmt.Fprintf(g.io.err, "Delete the store %s with every snapshot of every project? [y/N] ", store.Location())
				answer, _ := bufio.NewReader(g.io.in).ReadString('\n')
				if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
					return fmt.Errorf("clear cancelled; nothing was deleted")
				}
			}
			if err := store.Clear(cmd.Context()); err != nil {
				return err
			}
			return g.emit(jsonapi.Clear{Cleared: jsonapi.Path(store.Location())}, func(w io.Writer) {
				fmt.Fprintf(w, "deleted %s\n", store.Location())
			})
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "do not ask")
	return cmd
}
