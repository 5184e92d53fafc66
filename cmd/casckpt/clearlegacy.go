package main

import "github.com/spf13/cobra"

// clearLegacyOptions are the flags of clear-legacy.
type clearLegacyOptions struct {
	from      string
	fromAgent string
	path      string
	yes       bool
}

func newClearLegacyCommand(g *globals) *cobra.Command {
	var o clearLegacyOptions
	cmd := &cobra.Command{
		Use:   "clear-legacy",
		Short: "delete the legacy Hermes stores that are fully imported",
		Long: `clear-legacy deletes the legacy Hermes stores under --from whose every
commit has been imported, and names and keeps (exit 1) any that are not.
With --from-agent cline, roo, gemini or all it deletes instead that
agent's fully imported shadow repositories (at its default locations or
--path, as for migrate), never a task's conversation.`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error { return runClearLegacy(cmd.Context(), o, g) },
	}
	cmd.Flags().StringVar(&o.from, "from", "", "directory of the legacy checkpoints")
	cmd.Flags().StringVar(&o.fromAgent, "from-agent", "", "delete another agent's imported stores: cline, roo, gemini or all")
	cmd.Flags().StringVar(&o.path, "path", "", "with --from-agent: the directory to read instead of the default locations")
	cmd.Flags().BoolVar(&o.yes, "yes", false, "do not ask")
	return cmd
}
