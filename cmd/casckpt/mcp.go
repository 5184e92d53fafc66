package main

import (
	"bytes"
	"context"
	"errors"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt/integrations/mcp"
)

func newMCPCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "serve the checkpoint tools over the Model Context Protocol on stdin/stdout",
		Long: `mcp is a Model Context Protocol server on stdin and stdout with the tools
checkpoint_list, checkpoint_diff, checkpoint_restore, checkpoint_create,
checkpoint_undo, checkpoint_turns, checkpoint_file_history and
checkpoint_read_file. Each takes the project dir and the options of its
command and returns the command's --json document. checkpoint_restore and
checkpoint_undo are a dry run unless dry_run is false. A message longer than
16 MiB, or a batch in a session of protocol version 2025-06-18 or later, is
refused with a JSON-RPC error; when stdin ends, the requests still running
are answered before mcp exits.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			stdio := newMCPStdio(g.io.out)
			// MaxLineLength -1: stdio bounds the lines (maxRequestLine) and
			// refuses a longer one without ending the session.
			err := newMCPServer(g).Run(cmd.Context(), &sdk.IOTransport{Reader: stdio.reader(g.io.in), Writer: stdio, MaxLineLength: -1})
			if cmd.Context().Err() != nil || errors.Is(err, context.Canceled) {
				return nil // the client went away or a signal ended the session
			}
			return err
		},
	}
}

// newMCPServer is the MCP server whose tools run the commands in-process
// with g's store and environment.
func newMCPServer(g *globals) *sdk.Server {
	return mcp.NewServer(func(ctx context.Context, args []string) ([]byte, error) {
		if g.storeDir != "" {
			args = append([]string{"--store", g.storeDir}, args...)
		}
		var out, errb bytes.Buffer
		code := run(ctx, args, stdio{in: strings.NewReader(""), out: &out, err: &errb}, g.env)
		if code != exitOK {
			msg := strings.TrimPrefix(strings.TrimSpace(errb.String()), errorPrefix)
			if i := strings.LastIndex(msg, "\n"+errorPrefix); i >= 0 {
				msg = msg[i+1+len(errorPrefix):] // the error, after any warnings
			}
			return nil, errors.New(msg)
		}
		return out.Bytes(), nil
	}, buildVersion().Version)
}
