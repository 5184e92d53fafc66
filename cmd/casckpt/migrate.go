package main

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt/jsonapi"
	"github.com/casckpt/casckpt/migrate/gitimport"
	"github.com/casckpt/casckpt/migrate/hermes"
)

// legacyDir is where the legacy Hermes stores are looked for: --from, else
// $HERMES_HOME/checkpoints, else ~/.hermes/checkpoints.
func (g *globals) legacyDir(from string) string {
	switch {
	case from != "":
		return from
	case g.env("HERMES_HOME") != "":
		return filepath.Join(g.env("HERMES_HOME"), "checkpoints")
	}
	return filepath.Join(g.home(), ".hermes", "checkpoints")
}

func newMigrateCommand(g *globals) *cobra.Command {
	var from string
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "import the checkpoints of legacy Hermes git stores (no git needed)",
		Long: `migrate imports every commit of the legacy Hermes checkpoint stores under
--from (default $HERMES_HOME/checkpoints, else ~/.hermes/checkpoints) as a
snapshot of its project, oldest first. As for a snapshot, files larger than
10 MiB are left out and a commit of more than 50,000 files is not imported.
A second run imports nothing; the sources are never changed.`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			rep, err := hermes.Run(cmd.Context(), store, g.legacyDir(from), opts)
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
				SnapshotsSkipped: rep.SnapshotsSkipped, Errors: rep.Errors}
			return g.emit(doc, func(w io.Writer) {
				fmt.Fprintf(w, "imported %s of %s (%s already imported)", countOf(int64(rep.SnapshotsImported), "snapshot"), countOf(int64(rep.Projects), "project"), count(int64(rep.SnapshotsSkipped)))
				if rep.GitlinksSkipped > 0 || rep.NamesSkipped > 0 {
					fmt.Fprintf(w, "; skipped %s and %s", count(int64(rep.GitlinksSkipped))+" submodule "+map[bool]string{true: "entry", false: "entries"}[rep.GitlinksSkipped == 1], countOf(int64(rep.NamesSkipped), "unusable name"))
				}
				fmt.Fprintln(w)
				if len(rep.Errors) > 0 {
					fmt.Fprintf(w, "%s could not be read (see the warnings above)\n", countOf(int64(len(rep.Errors)), "source"))
				}
			})
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "directory of the legacy checkpoints")
	return cmd
}

func newClearLegacyCommand(g *globals) *cobra.Command {
	var (
		from string
		yes  bool
	)
	cmd := &cobra.Command{
		Use:   "clear-legacy",
		Short: "delete the legacy Hermes stores that are fully imported",
		Long: `clear-legacy deletes the legacy Hermes stores under --from whose every
commit has been imported, and names and keeps (exit 1) any that are not.`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := g.open()
			if err != nil {
				return err
			}
			dir := g.legacyDir(from)
			if !yes {
				if !g.stdinTerminal() {
					return fmt.Errorf("clear-legacy deletes the imported legacy stores under %s; add --yes to confirm (no terminal to ask on)", dir)
				}
				fmt.Fprintf(g.io.err, "Delete the fully imported legacy stores under %s? [y/N] ", dir)
				answer, _ := bufio.NewReader(g.io.in).ReadString('\n')
				if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
					return fmt.Errorf("clear-legacy cancelled; nothing was deleted")
				}
			}
			deleted, kept, freed, err := hermes.ClearLegacy(cmd.Context(), store, dir, false)
			if err != nil {
				return err
			}
			if err := g.emit(jsonapi.ClearLegacy{Deleted: deleted, Kept: kept, BytesFreed: freed}, func(w io.Writer) {
				for _, d := range deleted {
					fmt.Fprintf(w, "deleted %s\n", d)
				}
				fmt.Fprintf(w, "freed %s\n", humanBytes(freed))
			}); err != nil {
				return err
			}
			if len(kept) > 0 {
				g.jsonDone = true
				return fmt.Errorf("kept %s: not every commit in it is imported; run casckpt migrate first", strings.Join(kept, ", "))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "directory of the legacy checkpoints")
	cmd.Flags().BoolVar(&yes, "yes", false, "do not ask")
	return cmd
}
