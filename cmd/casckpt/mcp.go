package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
checkpoint_undo are a dry run unless dry_run is false.`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := &lockedWriter{w: g.io.out}
			err := newMCPServer(g).Run(cmd.Context(), &sdk.IOTransport{Reader: wellFormed(g.io.in, out), Writer: out})
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

// wellFormed passes on the lines of in that are JSON-RPC messages (or
// batches of them) and answers any other line with a JSON-RPC error on out,
// so that a malformed message is refused and does not end the session (the
// SDK's transport ends it on the first undecodable line).
func wellFormed(in io.Reader, out io.Writer) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		r := bufio.NewReader(in)
		for {
			line, err := r.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				if msg := malformed(line); msg != "" {
					fmt.Fprintf(out, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":%q}}`+"\n", msg)
				} else if _, werr := pw.Write(line); werr != nil {
					return
				}
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}

// malformed says why line is no JSON-RPC message or batch of them, "" when
// it is one.
func malformed(line []byte) string {
	var batch []json.RawMessage
	if json.Unmarshal(line, &batch) != nil {
		batch = []json.RawMessage{line}
	}
	for _, raw := range batch {
		if _, err := jsonrpc.DecodeMessage(raw); err != nil {
			return "parse error: not a JSON-RPC message: " + strings.ReplaceAll(err.Error(), "\n", " ")
		}
	}
	return ""
}

// lockedWriter is the process's stdout shared by the transport and
// wellFormed's error replies, one whole line per Write; closing it is
// left to the process's end.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close does nothing: stdout outlives the session.
func (l *lockedWriter) Close() error { return nil }
