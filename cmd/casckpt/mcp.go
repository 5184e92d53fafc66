package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/integrations/mcp"
)

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
		RunE: func(cmd *cobra.Command, _ []string) error {
			if keptOld != nil { // a server lives on: each restore frees what it replaced
				keptOld = nil
			}
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
// with g's store and environment; its results name that store.
func newMCPServer(g *globals) *sdk.Server {
	return mcp.NewServer(func(ctx context.Context, args []string) ([]byte, error) {
		if g.storeDir != "" {
			args = append([]string{"--store", g.storeDir}, args...)
		}
		var out, errb bytes.Buffer
		code := run(ctx, args, stdio{in: strings.NewReader(""), out: &out, err: &errb}, g.env)
		if code != exitOK {
			return nil, errors.New(lastError(errb.String()))
		}
		return out.Bytes(), nil
	}, g.storeName(), buildVersion().Version)
}

// storeName is the store the commands use, as a result names it: an
// absolute directory, or the s3:// URL; "" when none is set.
func (g *globals) storeName() string {
	name, err := g.storePath()
	if err != nil || casckpt.IsBucket(name) {
		return name
	}
	if abs, err := filepath.Abs(name); err == nil {
		return abs
	}
	return name
}
