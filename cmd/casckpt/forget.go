package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

// forgetOptions are forget's flags.
type forgetOptions struct {
	dryRun bool
}

func newForgetCommand(g *globals) *cobra.Command {
	var o forgetOptions
	cmd := &cobra.Command{
		Use:   "forget [DIR] SNAP...",
		Short: "drop snapshots, pinned or not (gc returns their space)",
		Long: `forget drops the named snapshots of the project, pinned or not. --dry-run changes
nothing and says, for each, the bytes no other snapshot holds (what a later gc frees).
JSON: {"forgotten": [ID...], "dry_run", "snapshots": [...], "frees_bytes"}.`,
		Args: argsBetween(1, -1),
		RunE: func(cmd *cobra.Command, args []string) error { return runForget(cmd.Context(), g, o, args) },
	}
	addHereFlag(cmd, g)
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "show what would be forgotten and change nothing")
	return cmd
}

// runForget drops the snapshots args ([DIR] SNAP...) name, or with
// --dry-run says what it would drop.
func runForget(ctx context.Context, g *globals, o forgetOptions, args []string) error {
	dir, rest := splitDir(args, 1)
	store, proj, err := g.openProject(ctx, dir)
	if err != nil {
		return err
	}
	refs := make([]casckpt.Ref, len(rest))
	for i, r := range rest {
		refs[i] = casckpt.Ref(r)
	}
	plan, err := store.PlanForget(ctx, proj.dir, o.dryRun, refs...)
	if err != nil {
		return err
	}
	doc := forgetDocument(plan, o.dryRun)
	if !o.dryRun {
		exact := make([]casckpt.Ref, len(doc.Forgotten)) // the snapshots the plan describes
		for i, id := range doc.Forgotten {
			exact[i] = casckpt.Ref(id)
		}
		if _, err := store.Forget(ctx, proj.dir, exact...); err != nil {
			return err
		}
	}
	return g.emit(doc, func(w io.Writer) { printForget(w, plan, o.dryRun) })
}

// forgetDocument is forget's JSON document of plan.
func forgetDocument(plan casckpt.ForgetPlan, dryRun bool) jsonapi.Forget {
	doc := jsonapi.Forget{Forgotten: []string{}, DryRun: dryRun, Snapshots: []jsonapi.Forgotten{}}
	if plan.Measured {
		doc.FreesBytes = &plan.Frees
	}
	for i, sn := range plan.Snapshots {
		f := jsonapi.Forgotten{ID: sn.ID.String(), Number: sn.Serial, Time: sn.Time.Format(time.RFC3339), Reason: sn.Reason,
			Pinned: sn.Pinned, Session: labelOrNull(sn.Session), Turn: labelOrNull(sn.Turn)}
		if plan.Measured {
			f.AloneBytes = &plan.Alone[i]
		}
		doc.Forgotten = append(doc.Forgotten, f.ID)
		doc.Snapshots = append(doc.Snapshots, f)
	}
	return doc
}

// printForget is forget's human output.
func printForget(w io.Writer, plan casckpt.ForgetPlan, dryRun bool) {
	verb := "forgot"
	if dryRun {
		verb = "would forget"
	}
	for i, sn := range plan.Snapshots {
		fmt.Fprintf(w, "%s %s #%d", verb, sn.ID.Short(), sn.Serial)
		if sn.Pinned {
			fmt.Fprint(w, " (pinned)")
		}
		if sn.Turn != "" {
			fmt.Fprintf(w, " turn %s", oneLine(sn.Turn))
		}
		if plan.Measured {
			fmt.Fprintf(w, ": %s held by no other snapshot", humanBytes(plan.Alone[i]))
		}
		fmt.Fprintln(w)
	}
	if plan.Measured {
		fmt.Fprintf(w, "a later gc frees %s of theirs; nothing changed (dry run)\n", humanBytes(plan.Frees))
	}
}
