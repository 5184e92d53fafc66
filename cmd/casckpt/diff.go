package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

// diffOptions are the flags of diff.
type diffOptions struct {
	stat, patch, semantic bool
}

func newDiffCommand(g *globals) *cobra.Command {
	var o diffOptions
	cmd := &cobra.Command{
		Use:   "diff [DIR] SNAP [SNAP2]",
		Short: "show what changed from SNAP to the working tree (or to SNAP2)",
		Long: `diff compares snapshot SNAP with the working tree, or with SNAP2. With two
arguments, the first is DIR unless it is a snapshot reference (hex digits,
@N or #N) and not an existing directory. With --semantic, a file whose two
versions are JSON documents shows the values that changed, by JSONPath
("~ $.iteration: 5 → 7"), instead of its lines.`,
		Args: argsBetween(1, 3),
		RunE: func(cmd *cobra.Command, args []string) error { return runDiff(cmd.Context(), o, g, args) },
	}
	cmd.Flags().BoolVar(&o.stat, "stat", false, "show a summary per file instead of the patch")
	cmd.Flags().BoolVar(&o.patch, "patch", false, "with --json: give each file's unified diff as its patch")
	cmd.Flags().BoolVar(&o.semantic, "semantic", false, "show the values that changed in JSON files, by JSONPath, instead of their lines")
	addHereFlag(cmd, g)
	return cmd
}

// runDiff prints the diff of the snapshots args ([DIR] SNAP [SNAP2])
// name, or of SNAP and the working tree.
func runDiff(ctx context.Context, o diffOptions, g *globals, args []string) error {
	dir, refs := splitDir(args, 1)
	if len(refs) > 2 {
		return usagef("diff takes [DIR] SNAP [SNAP2]; %q is not a directory", args[0])
	}
	stat, patch := o.stat, o.patch
	if stat && o.semantic {
		return usagef("--stat and --semantic do not go together")
	}
	store, proj, err := g.openProject(ctx, dir)
	if err != nil {
		return err
	}
	opts := casckpt.DiffOptions{Patch: g.json && patch || !g.json && !stat, JSON: g.json || o.semantic}
	if len(refs) == 2 {
		opts.To = casckpt.Ref(refs[1])
	}
	res, err := store.Diff(ctx, proj.dir, casckpt.Ref(refs[0]), opts)
	if err != nil {
		return err
	}
	doc := jsonapi.Diff{From: res.From.String(), To: "worktree", Files: []jsonapi.DiffFile{},
		FilesChanged: res.FilesChanged, Insertions: res.Insertions, Deletions: res.Deletions}
	if !res.To.IsZero() {
		doc.To = res.To.String()
	}
	for _, f := range res.Files {
		file := jsonapi.DiffFile{Path: jsonapi.Path(f.Path), Status: string(f.Status), Insertions: f.Insertions, Deletions: f.Deletions, Binary: f.Binary}
		if g.json && patch {
			file.Patch = &f.Patch
		}
		if f.JSON != nil {
			changes := jsonChanges(f.JSON)
			file.JSONChanges = &changes
		}
		doc.Files = append(doc.Files, file)
	}
	colour := g.colour()
	return g.emit(doc, func(io.Writer) {
		g.withPager(func(w io.Writer) {
			if stat {
				writeStat(w, res, g.statWidth())
				return
			}
			for _, f := range res.Files {
				if o.semantic && f.JSON != nil {
					writeSemantic(w, f, colour)
					continue
				}
				if colour {
					colourPatch(w, f.Patch)
				} else {
					io.WriteString(w, f.Patch)
				}
			}
		})
	})
}
