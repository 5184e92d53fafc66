package main

import "github.com/spf13/cobra"

// migrateOptions are the flags of migrate.
type migrateOptions struct {
	from      string
	fromAgent string
	path      string
}

func newMigrateCommand(g *globals) *cobra.Command {
	var o migrateOptions
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "import the checkpoints of Hermes, Cline, Roo Code or Gemini CLI (no git needed)",
		Long: `migrate imports every commit of the legacy Hermes checkpoint stores under
--from (default $HERMES_HOME/checkpoints, else ~/.hermes/checkpoints) as a
snapshot of its project, oldest first. As for a snapshot, files larger than
10 MiB are left out and a commit of more than 50,000 files is not imported.
A second run imports nothing; the sources are never changed.

With --from-agent cline, roo or gemini (or all) it imports the shadow git
repositories of Cline, Roo Code or Gemini CLI instead, from their default
locations or --path (for Cline and Roo Code an editor's User/globalStorage
directory, for Gemini CLI the .gemini directory): each commit that changes
the tree becomes a snapshot labelled with the task's session
(cline:<taskId>, roo:<taskId>, gemini:<slug>) and a turn.`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error { return runMigrate(cmd.Context(), o, g) },
	}
	cmd.Flags().StringVar(&o.from, "from", "", "directory of the legacy checkpoints")
	cmd.Flags().StringVar(&o.fromAgent, "from-agent", "", "import another agent's checkpoints: cline, roo, gemini or all")
	cmd.Flags().StringVar(&o.path, "path", "", "with --from-agent: the directory to read instead of the default locations")
	return cmd
}
