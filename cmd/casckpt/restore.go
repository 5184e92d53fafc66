package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

// restoreOptions are the flags of restore.
type restoreOptions struct {
	dryRun    bool
	safe      bool
	fallback  bool
	maxFileMB int64
	maxFiles  int
	given     map[string]bool // the flags the command line gave
}

func newRestoreCommand(g *globals) *cobra.Command {
	var o restoreOptions
	cmd := &cobra.Command{
		Use:   "restore [DIR] SNAP [PATH...] [--safe] [--fallback]",
		Short: "make the working tree (or PATHs in it) equal to snapshot SNAP",
		Long: `restore first snapshots the current tree (reason "pre-restore: ..."), then
writes every file, link and directory of SNAP and deletes what SNAP lacks.
Ignored and excluded paths that SNAP lacks are never touched. The first
argument is DIR unless it is a snapshot reference (hex digits, @N or #N).

With --safe, only what agents changed is restored: a path is put back when
it is still as an agent left it (at the end of the newest turn since SNAP
that changed it, or as record-write last recorded it); every other path is
kept and listed with why. When nothing is known of agents since SNAP (no
turn ended, no write recorded), --safe restores everything and says so.

With --fallback, when SNAP's data is damaged (a missing or corrupt object
anywhere in its tree), restore uses the newest older snapshot whose whole
tree is intact, trying each in turn and reading all of it before writing
anything; one line on stderr names the snapshot used and why the newer
ones were passed over ("tried" in the JSON). When none is left it fails,
changing nothing: "no intact copy of DIR (tried N snapshots)".

Where the stored copy of a file that restore overwrites or deletes is
damaged (the tree holds the one intact copy), restore stores the file's
bytes again first, so the pre-restore snapshot (taken then even when the
tree equals the newest snapshot) gives them back; when it cannot (a full
disk), it refuses and changes nothing.`,
		Args: argsBetween(1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.given = changedFlags(cmd)
			return runRestore(cmd.Context(), o, g, args)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.dryRun, "dry-run", false, "show what would change and change nothing")
	f.BoolVar(&o.safe, "safe", false, "restore only what agents changed; keep and list everything else")
	f.BoolVar(&o.fallback, "fallback", false, "if SNAP's data is damaged, restore the newest older snapshot that is intact")
	// No default shown by the flag: it is the snapshot's own limit.
	f.Int64Var(&o.maxFileMB, "max-file-size-mb", 0, "files larger than N MiB that SNAP lacks are excluded, so never touched (default: the snapshot's own limit)")
	f.IntVar(&o.maxFiles, "max-files", 50_000, "refuse a tree of more than N files")
	addHereFlag(cmd, g)
	return cmd
}

// beforeApply is RestoreOptions.BeforeApply and UndoOptions.BeforeApply
// of every restore and undo: nil, but for tests that change the tree
// between the plan and its writes.
var beforeApply func()

// runRestore restores the snapshot args ([DIR] SNAP [PATH...]) name and
// prints what it changed.
func runRestore(ctx context.Context, o restoreOptions, g *globals, args []string) error {
	dir, rest := splitDir(args, 1)
	var maxFileSize int64 // 0: the snapshot's own limit
	if o.given["max-file-size-mb"] {
		var err error
		if maxFileSize, err = mebibytes("max-file-size-mb", o.maxFileMB, 1); err != nil {
			return err
		}
	}
	if o.maxFiles < 1 {
		return usagef("--max-files takes a number of at least 1")
	}
	ref, paths := rest[0], rest[1:]
	store, proj, err := g.openProject(ctx, dir)
	if err != nil {
		return err
	}
	opts := casckpt.RestoreOptions{Paths: proj.paths(paths), DryRun: o.dryRun, MaxFiles: o.maxFiles, MaxFileSize: maxFileSize, Safe: o.safe, Fallback: o.fallback, BeforeApply: beforeApply, KeepOld: keepOld()}
	progress, finish := g.restoreBar()
	opts.Progress = progress
	res, err := store.Restore(ctx, proj.dir, casckpt.Ref(ref), opts)
	finish()
	if err != nil {
		if !o.dryRun {
			g.interrupted = "files may be partly restored; if so, the newest snapshot (@1) holds the tree from before"
			if !res.PreRestoreID.IsZero() {
				g.interrupted = "files may be partly restored; snapshot " + res.PreRestoreID.Short() + " holds the tree from before"
			}
		}
		return err
	}
	g.warnFallback(res.RestoredTo, res.Tried)
	reasons := map[string]string{} // of skipped paths: what this file system cannot hold, what changed
	for _, k := range res.Kept {
		reasons[k.Path] = k.Reason
	}
	for _, p := range res.Changed {
		reasons[p] = casckpt.ReasonChangedDuring
	}
	for _, p := range res.Skipped {
		why := cmp.Or(reasons[p], "an excluded file is in the way")
		g.warn(fmt.Sprintf("%s left alone: %s", p, why))
	}
	doc := newRestoreJSON(res, o.safe)
	if o.fallback {
		tried := triedJSON(res.Tried)
		doc.Tried = &tried
	}
	// Where the restored snapshot stands now (the pre-restore snapshot
	// moved it down); the restore is done even if this cannot be read.
	name := res.RestoredTo.Short()
	if place, err := store.Place(ctx, proj.dir, casckpt.Ref(res.RestoredTo.String())); err == nil {
		name = fmt.Sprintf("%s (#%d, now @%d)", name, place.Serial, place.Number)
	}
	return g.emit(doc, func(w io.Writer) { printRestore(w, res, o, name) })
}

// printRestore prints restore's result res for people; name is the
// restored snapshot as it stands now.
func printRestore(w io.Writer, res casckpt.RestoreResult, o restoreOptions, name string) {
	if o.safe {
		printSafe(w, res)
	}
	if o.dryRun {
		for _, c := range res.Changes {
			if c.Old.Kind == casckpt.KindDir || c.New.Kind == casckpt.KindDir {
				continue
			}
			mark := map[casckpt.Status]string{casckpt.Added: "+", casckpt.Modified: "M", casckpt.Deleted: "-", casckpt.TypeChanged: "T"}[c.Status]
			fmt.Fprintf(w, "%s %s\n", mark, c.Path)
		}
		fmt.Fprintf(w, "would restore %s: %s written, %s deleted\n", name, count(int64(res.Written)), count(int64(res.Deleted)))
		return
	}
	fmt.Fprintf(w, "restored %s: %s written, %s deleted", name, count(int64(res.Written)), count(int64(res.Deleted)))
	if !res.PreRestoreID.IsZero() {
		fmt.Fprintf(w, " (the tree before is snapshot %s, now @1)", res.PreRestoreID.Short())
	}
	fmt.Fprintln(w)
}

// restoreBar is the progress callback of a restore, which draws a bar of
// the files and bytes written on a terminal (nil otherwise), and the
// function that finishes the bar once the restore returns.
func (g *globals) restoreBar() (progress func(files, filesTotal, bytes, bytesTotal int64), finish func()) {
	if !g.stderrTerminal() {
		return nil, func() {}
	}
	var (
		mu  sync.Mutex
		bar *progressbar.ProgressBar
	)
	progress = func(files, filesTotal, bytes, bytesTotal int64) {
		mu.Lock()
		defer mu.Unlock()
		if filesTotal == 0 {
			return
		}
		if bar == nil {
			total := bytesTotal
			if total == 0 {
				total = -1 // links only: no byte total to show
			}
			bar = newBytesBar(g.io.err, total, progressbar.OptionSetPredictTime(false))
		}
		bar.Describe(fmt.Sprintf("restoring %s/%s files", count(files), count(filesTotal)))
		_ = bar.Set64(bytes)
	}
	finish = func() {
		mu.Lock()
		defer mu.Unlock()
		if bar != nil {
			_ = bar.Finish()
		}
	}
	return progress, finish
}

// newRestoreJSON is the JSON document of restore result res, with the
// safe restore's fields when safe.
func newRestoreJSON(res casckpt.RestoreResult, safe bool) jsonapi.Restore {
	doc := jsonapi.Restore{RestoredTo: res.RestoredTo.String(), PreRestoreID: idOrNull(res.PreRestoreID),
		Written: res.Written, Deleted: res.Deleted, DryRun: res.DryRun,
		Changes: []jsonapi.RestoreChange{}, Skipped: jsonapi.Paths(res.Skipped)}
	if safe {
		kept := make([]jsonapi.PathReason, len(res.Kept))
		for i, k := range res.Kept {
			kept[i] = jsonapi.PathReason{Path: jsonapi.Path(k.Path), Reason: k.Reason}
		}
		doc.Safe, doc.Kept = &res.Safe, &kept
	}
	for _, c := range res.Changes {
		switch {
		case c.Status == casckpt.Deleted && c.Old.Kind != casckpt.KindDir:
			doc.Changes = append(doc.Changes, jsonapi.RestoreChange{Path: jsonapi.Path(c.Path), Action: "delete"})
		case c.Status != casckpt.Deleted && c.New.Kind != casckpt.KindDir:
			doc.Changes = append(doc.Changes, jsonapi.RestoreChange{Path: jsonapi.Path(c.Path), Action: "write"})
		}
	}
	return doc
}

// printSafe tells what a safe restore kept, or that it restored everything.
func printSafe(w io.Writer, res casckpt.RestoreResult) {
	if !res.Safe {
		fmt.Fprintf(w, "nothing is known of agents since %s (no turn ended, no write recorded): restoring everything\n", res.RestoredTo.Short())
		return
	}
	for _, k := range res.Kept {
		fmt.Fprintf(w, "kept %s: %s\n", k.Path, k.Reason)
	}
}
