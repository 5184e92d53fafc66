package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
)

func newDiffCommand(g *globals) *cobra.Command {
	var stat bool
	cmd := &cobra.Command{
		Use:   "diff [DIR] SNAP [SNAP2]",
		Short: "show what changed from SNAP to the working tree (or to SNAP2)",
		Long: `diff compares snapshot SNAP with the working tree, or with SNAP2. With two
arguments, the first is DIR unless it is a snapshot reference (hex digits or
@N) and not an existing directory.`,
		Args: cobra.RangeArgs(1, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, refs := splitDir(args, 1)
			if len(refs) > 2 {
				return usagef("diff takes [DIR] SNAP [SNAP2]; %q is not a directory", args[0])
			}
			return runDiff(cmd, g, dir, refs, stat)
		},
	}
	cmd.Flags().BoolVar(&stat, "stat", false, "show a summary per file instead of the patch")
	return cmd
}

type diffFileJSON struct {
	Path       string `json:"path"`
	Status     string `json:"status"`
	Insertions int64  `json:"insertions"`
	Deletions  int64  `json:"deletions"`
	Binary     bool   `json:"binary"`
}

type diffJSON struct {
	From         string         `json:"from"`
	To           string         `json:"to"`
	Files        []diffFileJSON `json:"files"`
	FilesChanged int64          `json:"files_changed"`
	Insertions   int64          `json:"insertions"`
	Deletions    int64          `json:"deletions"`
}

func runDiff(cmd *cobra.Command, g *globals, dir string, refs []string, stat bool) error {
	store, err := g.open()
	if err != nil {
		return err
	}
	opts := casckpt.DiffOptions{Patch: !g.json && !stat}
	if len(refs) == 2 {
		opts.To = casckpt.Ref(refs[1])
	}
	res, err := store.Diff(cmd.Context(), dir, casckpt.Ref(refs[0]), opts)
	if err != nil {
		return err
	}
	doc := diffJSON{From: res.From.String(), To: "worktree", Files: []diffFileJSON{},
		FilesChanged: res.FilesChanged, Insertions: res.Insertions, Deletions: res.Deletions}
	if !res.To.IsZero() {
		doc.To = res.To.String()
	}
	for _, f := range res.Files {
		doc.Files = append(doc.Files, diffFileJSON{Path: f.Path, Status: string(f.Status), Insertions: f.Insertions, Deletions: f.Deletions, Binary: f.Binary})
	}
	return g.emit(doc, func(w io.Writer) {
		if stat {
			writeStat(w, res)
			return
		}
		for _, f := range res.Files {
			io.WriteString(w, f.Patch)
		}
	})
}

// writeStat prints git's --stat: a line per file and a summary.
func writeStat(w io.Writer, res casckpt.DiffResult) {
	width := 0
	for _, f := range res.Files {
		width = max(width, len(f.Path))
	}
	most := int64(1)
	for _, f := range res.Files {
		most = max(most, f.Insertions+f.Deletions)
	}
	const barWidth = 40
	for _, f := range res.Files {
		if f.Binary {
			fmt.Fprintf(w, " %-*s | Bin\n", width, f.Path)
			continue
		}
		n := f.Insertions + f.Deletions
		plus, minus := f.Insertions, f.Deletions
		if most > barWidth {
			plus, minus = plus*barWidth/most, minus*barWidth/most
		}
		fmt.Fprintf(w, " %-*s | %d %s%s\n", width, f.Path, n, strings.Repeat("+", int(plus)), strings.Repeat("-", int(minus)))
	}
	// The contract's words, always plural, so scripts can match one form.
	fmt.Fprintf(w, " %d files changed, %d insertions(+), %d deletions(-)\n", res.FilesChanged, res.Insertions, res.Deletions)
}
