package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

const catUse = "cat [DIR] SNAP PATH"

func newCatCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   catUse,
		Short: "write one file's bytes from snapshot SNAP to stdout",
		Long: `cat writes the bytes of PATH (relative to the project) as snapshot SNAP
holds them; for a symbolic link, its target. With --json it prints
{"path": PATH, "content": TEXT} instead when the bytes are UTF-8 text (no
NUL byte), else {"path": PATH, "content_base64": ...}.`,
		Args: argsBetween(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error { return runCat(cmd.Context(), g, args) },
	}
	addHereFlag(cmd, g)
	return cmd
}

// runCat writes the bytes of the file args ([DIR] SNAP PATH) name, or
// its JSON document.
func runCat(ctx context.Context, g *globals, args []string) error {
	dir, rest, err := splitDirExact(catUse, args, 2)
	if err != nil {
		return err
	}
	store, proj, err := g.openProject(ctx, dir)
	if err != nil {
		return err
	}
	if !g.json {
		return store.Cat(ctx, proj.dir, casckpt.Ref(rest[0]), proj.path(rest[1]), g.io.out)
	}
	var b bytes.Buffer
	if err := store.Cat(ctx, proj.dir, casckpt.Ref(rest[0]), proj.path(rest[1]), &b); err != nil {
		return err
	}
	return writeJSON(g.io.out, newCatJSON(rest[1], b.Bytes()))
}

// newCatJSON is cat's document for the bytes b of path. Text is valid
// UTF-8 without a NUL byte (a NUL makes a file binary, as for diff).
func newCatJSON(path string, b []byte) jsonapi.Cat {
	if utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 {
		text := string(b)
		return jsonapi.Cat{Path: jsonapi.Path(path), Content: &text}
	}
	enc := base64.StdEncoding.EncodeToString(b)
	return jsonapi.Cat{Path: jsonapi.Path(path), ContentBase64: &enc}
}
