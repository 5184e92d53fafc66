package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
)

func newCatCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "cat [DIR] SNAP PATH",
		Short: "write one file's bytes from snapshot SNAP to stdout",
		Long: `cat writes the bytes of PATH (relative to the project) as snapshot SNAP
holds them; for a symbolic link, its target. With --json it prints
{"path": PATH, "content": TEXT} instead when the bytes are UTF-8 text (no
NUL byte), else {"path": PATH, "content_base64": ...}.`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, rest, err := splitDirExact(cmd, args, 2)
			if err != nil {
				return err
			}
			store, err := g.open()
			if err != nil {
				return err
			}
			if !g.json {
				return store.Cat(cmd.Context(), dir, casckpt.Ref(rest[0]), rest[1], g.io.out)
			}
			var b bytes.Buffer
			if err := store.Cat(cmd.Context(), dir, casckpt.Ref(rest[0]), rest[1], &b); err != nil {
				return err
			}
			return writeJSON(g.io.out, newCatJSON(rest[1], b.Bytes()))
		},
	}
}

// catJSON is cat's JSON document: the bytes as text when they are UTF-8
// text, else in base64 (exactly one of the two is set).
type catJSON struct {
	Path          casckpt.JSONPath `json:"path"`
	Content       *string          `json:"content,omitempty"`
	ContentBase64 *string          `json:"content_base64,omitempty"`
}

// newCatJSON is cat's document for the bytes b of path. Text is valid
// UTF-8 without a NUL byte (a NUL makes a file binary, as for diff).
func newCatJSON(path string, b []byte) catJSON {
	if utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 {
		text := string(b)
		return catJSON{Path: casckpt.JSONPath(path), Content: &text}
	}
	enc := base64.StdEncoding.EncodeToString(b)
	return catJSON{Path: casckpt.JSONPath(path), ContentBase64: &enc}
}

type lsItemJSON struct {
	Path casckpt.JSONPath `json:"path"`
	Type string           `json:"type"`
	Size int64            `json:"size"`
	// Mode is the permission bits as a number (420 is 0644, 493 is 0755).
	Mode uint32 `json:"mode"`
}

func newLsCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "ls [DIR] SNAP",
		Short: "list every entry of snapshot SNAP",
		Long:  `ls lists SNAP's files, links and directories. In JSON, mode is the permission bits as a number (420 is 0644).`,
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, rest, err := splitDirExact(cmd, args, 1)
			if err != nil {
				return err
			}
			store, err := g.open()
			if err != nil {
				return err
			}
			entries, err := store.Ls(cmd.Context(), dir, casckpt.Ref(rest[0]))
			if err != nil {
				return err
			}
			items := make([]lsItemJSON, 0, len(entries))
			for _, e := range entries {
				items = append(items, lsItemJSON{Path: casckpt.JSONPath(e.Path), Type: e.Entry.Kind.String(), Size: e.Entry.Size, Mode: e.Entry.Mode()})
			}
			return g.emit(items, func(w io.Writer) {
				tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
				for i, it := range items {
					name := string(it.Path)
					switch it.Type {
					case "dir":
						name += "/"
					case "symlink":
						name += " -> " + entries[i].Entry.Target
					}
					fmt.Fprintf(tw, "%04o\t%s\t %s\n", it.Mode, humanBytes(it.Size), oneLine(name))
				}
				tw.Flush()
			})
		},
	}
}

func newExportCommand(g *globals) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "export [DIR] SNAP -o FILE",
		Short: "write snapshot SNAP as a POSIX tar archive (-o - for stdout)",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, rest, err := splitDirExact(cmd, args, 1)
			if err != nil {
				return err
			}
			if out == "" {
				return usagef("export needs -o FILE (or -o - for stdout)")
			}
			if out == "-" && g.json {
				return usagef("export -o - writes the archive to stdout; it cannot also print JSON")
			}
			store, err := g.open()
			if err != nil {
				return err
			}
			if out == "-" {
				return store.Export(cmd.Context(), dir, casckpt.Ref(rest[0]), g.io.out)
			}
			if err := exportFile(cmd, store, dir, rest[0], out); err != nil {
				return err
			}
			abs, _ := filepath.Abs(out)
			return g.emit(map[string]any{"snapshot": rest[0], "file": casckpt.JSONPath(abs)}, func(w io.Writer) {
				fmt.Fprintf(w, "wrote %s\n", out)
			})
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "archive file to write, - for stdout")
	return cmd
}

// exportFile writes the archive to a temporary file beside out and renames
// it into place, so a failed export leaves no partial archive.
func exportFile(cmd *cobra.Command, store *casckpt.Store, dir, ref, out string) error {
	tmp, err := os.CreateTemp(filepath.Dir(out), ".casckpt-export-*")
	if err != nil {
		return err
	}
	err = store.Export(cmd.Context(), dir, casckpt.Ref(ref), tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), out)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
