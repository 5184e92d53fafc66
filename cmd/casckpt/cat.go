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

// catOptions are the flags of cat.
type catOptions struct {
	fallback bool
	check    string
}

func newCatCommand(g *globals) *cobra.Command {
	var o catOptions
	cmd := &cobra.Command{
		Use:   catUse + " [--fallback [--check json]]",
		Short: "write one file's bytes from snapshot SNAP to stdout",
		Long: `cat writes the bytes of PATH (relative to the project) as snapshot SNAP
holds them; for a symbolic link, its target. With --json it prints
{"path": PATH, "id": SNAPSHOT, "tried": [], "content": TEXT} instead when
the bytes are UTF-8 text (no NUL byte), else "content_base64" in place of
"content".

With --fallback, when SNAP's data is damaged (a missing or corrupt
object), or with --check json PATH does not parse as JSON, cat uses the
newest older snapshot whose copy is intact (and parses), trying each in
turn; one line on stderr names the snapshot used and why the newer ones
were passed over ("tried" in the JSON). When none is left it fails:
"no intact copy of PATH (tried N snapshots)".`,
		Args: argsBetween(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error { return runCat(cmd.Context(), o, g, args) },
	}
	cmd.Flags().BoolVar(&o.fallback, "fallback", false, "if SNAP's copy is damaged (or fails --check), use the newest older snapshot's intact copy")
	cmd.Flags().StringVar(&o.check, "check", "", `with --fallback: also pass over a copy that is not valid "json"`)
	addHereFlag(cmd, g)
	return cmd
}

// runCat writes the bytes of the file args ([DIR] SNAP PATH) name, or
// its JSON document.
func runCat(ctx context.Context, o catOptions, g *globals, args []string) error {
	dir, rest, err := splitDirExact(catUse, args, 2)
	if err != nil {
		return err
	}
	opts := casckpt.CatOptions{Fallback: o.fallback}
	switch {
	case o.check != "" && !o.fallback:
		return usagef("--check takes --fallback")
	case o.check == "json":
		opts.Check = casckpt.CheckJSON
	case o.check != "":
		return usagef("--check takes json, not %q", o.check)
	}
	store, proj, err := g.openProject(ctx, dir)
	if err != nil {
		return err
	}
	if !g.json && !o.fallback {
		_, err := store.CatWith(ctx, proj.dir, casckpt.Ref(rest[0]), proj.path(rest[1]), g.io.out, opts)
		return err
	}
	var b bytes.Buffer
	res, err := store.CatWith(ctx, proj.dir, casckpt.Ref(rest[0]), proj.path(rest[1]), &b, opts)
	if err != nil {
		return err
	}
	g.warnFallback(res.ID, res.Tried)
	if !g.json {
		_, err := g.io.out.Write(b.Bytes())
		return err
	}
	return writeJSON(g.io.out, newCatJSON(res, rest[1], b.Bytes()))
}

// newCatJSON is cat's document for the bytes b of path, read as res
// says. Text is valid UTF-8 without a NUL byte (a NUL makes a file
// binary, as for diff).
func newCatJSON(res casckpt.CatResult, path string, b []byte) jsonapi.Cat {
	doc := jsonapi.Cat{ID: res.ID.String(), Path: jsonapi.Path(path), Tried: triedJSON(res.Tried)}
	if utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 {
		text := string(b)
		doc.Content = &text
		return doc
	}
	enc := base64.StdEncoding.EncodeToString(b)
	doc.ContentBase64 = &enc
	return doc
}
