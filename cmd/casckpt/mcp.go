package main

import "github.com/spf13/cobra"

// maxRequestLine is the longest line (one JSON-RPC message or batch, its
// newline included) that `casckpt mcp` reads: 16 MiB, the official SDK's
// own default, far above any request of casckpt's tools. A longer line is
// read through without being kept and refused with a JSON-RPC error.
const maxRequestLine = 16 << 20

// newMCPCommand is mcp, the MCP server (see runMCP).
func newMCPCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "serve the checkpoint tools over the Model Context Protocol on stdin/stdout",
		Long: `mcp is a Model Context Protocol server on stdin and stdout with the tools
checkpoint_list, checkpoint_diff, checkpoint_restore, checkpoint_create,
checkpoint_undo, checkpoint_turns, checkpoint_file_history,
checkpoint_read_file, checkpoint_ls, checkpoint_pin and
checkpoint_record_write. Each takes the project dir (an absolute path) and
the options of its command and returns the command's --json document with
the store it used. checkpoint_diff adds the unified diffs, bounded.
checkpoint_restore and
checkpoint_undo are a dry run unless dry_run is false. A message longer than
16 MiB, or a batch in a session of protocol version 2025-06-18 or later, is
refused with a JSON-RPC error; when stdin ends, the requests still running
are answered before mcp exits.`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error { return runMCP(cmd, g) },
	}
}
