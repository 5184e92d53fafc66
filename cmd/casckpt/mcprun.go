//go:build !casckpt_lean

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

// runMCP serves the Model Context Protocol on g's standard streams until
// the client goes away.
func runMCP(cmd *cobra.Command, g *globals) error {
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
