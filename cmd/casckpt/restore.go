package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/manifest"
)

type restoreOptions struct {
	dryRun    bool
	maxFileMB int64
	maxFiles  int
}

func newRestoreCommand(g *globals) *cobra.Command {
	var o restoreOptions
	cmd := &cobra.Command{
		Use:   "restore [DIR] SNAP [PATH...]",
		Short: "make the working tree (or PATHs in it) equal to snapshot SNAP",
		Long: `restore first snapshots the current tree (reason "pre-restore: ..."), then
writes every file, link and directory of SNAP and deletes what SNAP lacks.
Ignored and excluded paths are never touched. The first argument is DIR
unless it is a snapshot reference (hex digits or @N).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, rest := splitDir(args, 1)
			if o.maxFileMB < 1 || o.maxFiles < 1 {
				return usagef("--max-file-size-mb and --max-files take a number of at least 1")
			}
			return runRestore(cmd, g, dir, rest[0], rest[1:], o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.dryRun, "dry-run", false, "show what would change and change nothing")
	f.Int64Var(&o.maxFileMB, "max-file-size-mb", 10, "files larger than N MiB are excluded, so never touched (default: the snapshot's own limit)")
	f.IntVar(&o.maxFiles, "max-files", 50_000, "refuse a tree of more than N files")
	return cmd
}

type restoreJSON struct {
	RestoredTo   string `json:"restored_to"`
	PreRestoreID any    `json:"pre_restore_id"`
	Written      int    `json:"written"`
	Deleted      int    `json:"deleted"`
	DryRun       bool   `json:"dry_run"`
}

func runRestore(cmd *cobra.Command, g *globals, dir, ref string, paths []string, o restoreOptions) error {
	store, err := g.open()
	if err != nil {
		return err
	}
	opts := casckpt.RestoreOptions{Paths: paths, DryRun: o.dryRun, MaxFiles: o.maxFiles}
	if cmd.Flags().Changed("max-file-size-mb") {
		opts.MaxFileSize = o.maxFileMB << 20 // else the limit the snapshot was taken with
	}
	res, err := store.Restore(cmd.Context(), dir, casckpt.Ref(ref), opts)
	if err != nil {
		return err
	}
	for _, p := range res.Skipped {
		g.warn(fmt.Sprintf("%s left alone: an excluded file is in the way", p))
	}
	doc := restoreJSON{RestoredTo: res.RestoredTo.String(), PreRestoreID: idOrNull(res.PreRestoreID),
		Written: res.Written, Deleted: res.Deleted, DryRun: res.DryRun}
	return g.emit(doc, func(w io.Writer) {
		if o.dryRun {
			for _, c := range res.Changes {
				if c.Old.Kind == manifest.KindDir || c.New.Kind == manifest.KindDir {
					continue
				}
				mark := map[manifest.Status]string{manifest.Added: "+", manifest.Modified: "M", manifest.Deleted: "-", manifest.TypeChanged: "T"}[c.Status]
				fmt.Fprintf(w, "%s %s\n", mark, c.Path)
			}
			fmt.Fprintf(w, "would restore %s: %d written, %d deleted\n", res.RestoredTo.Short(), res.Written, res.Deleted)
			return
		}
		fmt.Fprintf(w, "restored %s: %d written, %d deleted", res.RestoredTo.Short(), res.Written, res.Deleted)
		if !res.PreRestoreID.IsZero() {
			fmt.Fprintf(w, " (the tree before is snapshot %s)", res.PreRestoreID.Short())
		}
		fmt.Fprintln(w)
	})
}
