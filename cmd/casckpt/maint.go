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
			return g.emit(map[string]int64{"objects_deleted": int64(res.ObjectsDeleted), "bytes_freed": res.BytesFreed}, func(w io.Writer) {
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
		return g.emit(map[string]bool{"skipped": true}, func(w io.Writer) {
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
	drops := make([]dropJSON, 0, len(res.Drops))
	for _, d := range res.Drops {
		path, machine := projectOf(store, d.Project)
		drops = append(drops, dropJSON{Project: path, Machine: machine, ID: d.ID.String(), Rule: d.Rule})
	}
	doc := map[string]any{"skipped": false, "scanned": res.Scanned, "deleted_orphan": res.DeletedOrphan,
		"deleted_stale": res.DeletedStale, "snapshots_dropped": res.SnapshotsDropped, "bytes_freed": res.BytesFreed,
		"drops": drops}
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

// dropJSON is one snapshot a prune dropped (or would drop) and the rule
// that dropped it: orphan, stale or size-cap.
type dropJSON struct {
	Project casckpt.JSONPath `json:"project"`
	Machine *string          `json:"machine,omitempty"` // as in status
	ID      string           `json:"id"`
	Rule    string           `json:"rule"`
}

// ruleText explains each rule of a prune for people.
var ruleText = map[string]string{
	"orphan":   "orphan: its directory was deleted",
	"stale":    "stale: the project was not touched for --retention-days",
	"size-cap": "size-cap: the store is over --max-size-mb",
}

type projectJSON struct {
	Workdir   casckpt.JSONPath `json:"workdir"`
	Machine   *string          `json:"machine,omitempty"` // left out for a store in a directory
	Snapshots int              `json:"snapshots"`
	CreatedAt string           `json:"created_at"`
	LastTouch string           `json:"last_touch"`
	State     string           `json:"state"`
}

type legacyJSON struct {
	Path      casckpt.JSONPath `json:"path"`
	SizeBytes int64            `json:"size_bytes"`
	Migrated  bool             `json:"migrated"`
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
			projects := make([]projectJSON, 0, len(st.Projects))
			for _, p := range st.Projects {
				projects = append(projects, projectJSON{Workdir: casckpt.JSONPath(p.Workdir), Machine: labelOrNull(p.Machine), Snapshots: p.Snapshots,
					CreatedAt: p.Created.Format(time.RFC3339), LastTouch: p.LastTouch.Format(time.RFC3339), State: string(p.State)})
			}
			found, err := hermes.Status(cmd.Context(), store, g.legacyDir(""))
			if err != nil {
				return err
			}
			legacy := make([]legacyJSON, 0, len(found))
			for _, l := range found {
				legacy = append(legacy, legacyJSON{Path: casckpt.JSONPath(l.Path), SizeBytes: l.SizeBytes, Migrated: l.Migrated})
			}
			misses := g.hookMisses(hookMissesShown)
			doc := map[string]any{"store": casckpt.JSONPath(st.Store), "size_bytes": st.SizeBytes, "projects": projects, "legacy": legacy,
				"damaged_objects": damagedObjectsJSON(st.DamagedObjects), "hook_misses": misses}
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

// damagedObjectJSON is an object of a bucket store that syncs skip.
type damagedObjectJSON struct {
	Key    string `json:"key"`
	Reason string `json:"reason"`
}

// damagedObjectsJSON returns the JSON of objects, never nil.
func damagedObjectsJSON(objects []casckpt.DamagedObject) []damagedObjectJSON {
	out := make([]damagedObjectJSON, 0, len(objects))
	for _, o := range objects {
		out = append(out, damagedObjectJSON{Key: o.Key, Reason: o.Reason})
	}
	return out
}

// printDamagedObjects prints a line per damaged object of a bucket store.
func printDamagedObjects(w io.Writer, objects []casckpt.DamagedObject) {
	for _, o := range objects {
		fmt.Fprintf(w, "DAMAGED OBJECT %s: %s\n", oneLine(o.Key), oneLine(o.Reason))
	}
}

type damagedJSON struct {
	Project casckpt.JSONPath `json:"project"`
	Machine *string          `json:"machine,omitempty"` // as in status
	ID      string           `json:"id"`
	Reason  string           `json:"reason"`
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
			damaged := make([]damagedJSON, 0, len(res.Damaged))
			for _, d := range res.Damaged {
				path, machine := projectOf(store, d.Project)
				damaged = append(damaged, damagedJSON{Project: path, Machine: machine, ID: d.ID.String(), Reason: d.Reason})
			}
			rejected := make([]rejectedJSON, 0, len(res.Rejected))
			for _, r := range res.Rejected {
				rejected = append(rejected, rejectedJSON(r))
			}
			doc := map[string]any{"snapshots_checked": res.SnapshotsChecked, "objects_checked": res.ObjectsChecked, "damaged": damaged, "rejected": rejected,
				"damaged_objects": damagedObjectsJSON(res.DamagedObjects)}
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
				return fmt.Errorf("%s in the bucket carry no valid fleet signature and are ignored (gc refuses while a commit is among them): unless they predate CASCKPT_FLEET_KEY, someone without the key wrote them (see docs/remote.md, Trust)", countOf(int64(len(res.Rejected)), "object"))
			}
			if len(res.DamagedObjects) > 0 {
				g.jsonDone = true
				return fmt.Errorf("%s in the bucket, skipped by every command: delete them from the bucket once you have looked, then run casckpt repair", countOf(int64(len(res.DamagedObjects)), "damaged object"))
			}
			return nil
		},
	}
}

// rejectedJSON is an object of the bucket the fleet key refused.
type rejectedJSON struct {
	Key    string `json:"key"`
	Reason string `json:"reason"`
}

// projectOf splits the name under which store knows a project into its
// path and, on a bucket store, its machine (nil for a directory's).
func projectOf(store *casckpt.Store, workdir string) (casckpt.JSONPath, *string) {
	m, path := casckpt.SplitWorkdir(workdir)
	if m == "" {
		m = store.Machine()
	}
	return casckpt.JSONPath(path), labelOrNull(m)
}

type repairJSON struct {
	PacksRead       int      `json:"packs_read"`
	ObjectsIndexed  int      `json:"objects_indexed"`
	DamagedPacks    []string `json:"damaged_packs"`
	UnreadablePacks []string `json:"unreadable_packs"`
	Projects        int      `json:"projects"`
	Snapshots       int      `json:"snapshots"`
	Turns           int      `json:"turns"`
	FromOldDatabase int      `json:"from_old_database"`
	OldDatabase     any      `json:"old_database"`
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
			doc := repairJSON{PacksRead: res.PacksRead, ObjectsIndexed: res.ObjectsIndexed,
				DamagedPacks: orEmpty(res.DamagedPacks), UnreadablePacks: orEmpty(res.UnreadablePacks),
				Projects: res.Projects, Snapshots: res.Snapshots, Turns: res.Turns, FromOldDatabase: res.FromOldDatabase}
			if res.OldDatabase != "" {
				doc.OldDatabase = res.OldDatabase
			}
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
				fmt.Fprintf(g.io.err, "Delete the store %s with every snapshot of every project? [y/N] ", store.Dir())
				answer, _ := bufio.NewReader(g.io.in).ReadString('\n')
				if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
					return fmt.Errorf("clear cancelled; nothing was deleted")
				}
			}
			if err := store.Clear(cmd.Context()); err != nil {
				return err
			}
			return g.emit(map[string]any{"cleared": casckpt.JSONPath(store.Dir())}, func(w io.Writer) {
				fmt.Fprintf(w, "deleted %s\n", store.Dir())
			})
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "do not ask")
	return cmd
}
