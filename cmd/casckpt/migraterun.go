//go:build !casckpt_lean

package main

import (
	"context"
	"fmt"
	"io"

	"github.com/schollz/progressbar/v3"

	"github.com/casckpt/casckpt/jsonapi"
	"github.com/casckpt/casckpt/migrate/gitimport"
	"github.com/casckpt/casckpt/migrate/hermes"
)

// runMigrate imports the legacy Hermes stores and prints what it did.
func runMigrate(ctx context.Context, o migrateOptions, g *globals) error {
	store, err := g.open()
	if err != nil {
		return err
	}
	opts := gitimport.Options{}
	if g.stderrTerminal() {
		bar := progressbar.NewOptions(-1, progressbar.OptionSetWriter(g.io.err), progressbar.OptionSetDescription("importing commits"),
			progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
		defer bar.Finish()
		opts.Progress = func(done, total int) {
			bar.ChangeMax(total)
			_ = bar.Set(done)
		}
	}
	rep, err := o.run(ctx, g, store, opts)
	if err != nil {
		return err
	}
	for _, e := range rep.Errors {
		g.warn(e)
	}
	if rep.FilesTooLarge > 0 {
		g.warn(fmt.Sprintf("left out %s larger than 10 MiB, as a snapshot does", countOf(int64(rep.FilesTooLarge), "file")))
	}
	doc := jsonapi.Migrate{Projects: rep.Projects, SnapshotsImported: rep.SnapshotsImported,
		SnapshotsSkipped: rep.SnapshotsSkipped, Errors: rep.Errors, Agent: o.fromAgent}
	return g.emit(doc, func(w io.Writer) {
		fmt.Fprintf(w, "imported %s of %s (%s already imported)", countOf(int64(rep.SnapshotsImported), "snapshot"), countOf(int64(rep.Projects), "project"), count(int64(rep.SnapshotsSkipped)))
		if rep.SnapshotsUnchanged > 0 {
			fmt.Fprintf(w, "; %s changed nothing", countOf(int64(rep.SnapshotsUnchanged), "empty commit"))
		}
		if rep.GitlinksSkipped > 0 || rep.NamesSkipped > 0 {
			fmt.Fprintf(w, "; skipped %s and %s", count(int64(rep.GitlinksSkipped))+" submodule "+map[bool]string{true: "entry", false: "entries"}[rep.GitlinksSkipped == 1], countOf(int64(rep.NamesSkipped), "unusable name"))
		}
		fmt.Fprintln(w)
		if len(rep.Errors) > 0 {
			fmt.Fprintf(w, "%s could not be read (see the warnings above)\n", countOf(int64(len(rep.Errors)), "source"))
		}
	})
}

// run imports what the options name: the Hermes stores, or with
// --from-agent another agent's.
func (o migrateOptions) run(ctx context.Context, g *globals, store gitimport.Importer, opts gitimport.Options) (gitimport.Report, error) {
	if o.fromAgent == "" {
		if o.path != "" {
			return gitimport.Report{}, fmt.Errorf("--path goes with --from-agent; the Hermes stores are read from --from")
		}
		return hermes.Run(ctx, store, g.legacyDir(o.from), opts)
	}
	if o.from != "" {
		return gitimport.Report{}, fmt.Errorf("--from names the Hermes stores; with --from-agent give --path")
	}
	stores, err := g.agentStores(o.fromAgent, o.path)
	if err != nil {
		return gitimport.Report{}, err
	}
	return runAgents(ctx, store, stores, opts)
}
