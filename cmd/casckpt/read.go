package main

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

func newCatCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cat [DIR] SNAP PATH",
		Short: "write one file's bytes from snapshot SNAP to stdout",
		Long: `cat writes the bytes of PATH (relative to the project) as snapshot SNAP
holds them; for a symbolic link, its target. With --json it prints
{"path": PATH, "content": TEXT} instead when the bytes are UTF-8 text (no
NUL byte), else {"path": PATH, "content_base64": ...}.`,
		Args: argsBetween(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, rest, err := splitDirExact(cmd, args, 2)
			if err != nil {
				return err
			}
			store, proj, err := g.openProject(cmd.Context(), dir)
			if err != nil {
				return err
			}
			if !g.json {
				return store.Cat(cmd.Context(), proj.dir, casckpt.Ref(rest[0]), proj.path(rest[1]), g.io.out)
			}
			var b bytes.Buffer
			if err := store.Cat(cmd.Context(), proj.dir, casckpt.Ref(rest[0]), proj.path(rest[1]), &b); err != nil {
				return err
			}
			return writeJSON(g.io.out, newCatJSON(rest[1], b.Bytes()))
		},
	}
	addHereFlag(cmd, g)
	return cmd
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

func newLsCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ls [DIR] SNAP [PATH]",
		Short: "list the entries of snapshot SNAP (below PATH)",
		Long: `ls lists SNAP's files, links and directories; with PATH (relative to DIR,
default DIR itself), only that file or what is below that directory. Paths are shown relative to the project. With two arguments,
the first is DIR unless it is a snapshot reference. In JSON, mode is the
permission bits as a number (420 is 0644).`,
		Args: argsBetween(1, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, rest := splitDir(args, 1)
			if len(rest) > 2 {
				return usagef("ls takes [DIR] SNAP [PATH]; %q is not a directory", args[0])
			}
			store, proj, err := g.openProject(cmd.Context(), dir)
			if err != nil {
				return err
			}
			p := proj.sub
			if len(rest) == 2 {
				p = proj.path(rest[1])
			}
			entries, err := store.LsPath(cmd.Context(), proj.dir, casckpt.Ref(rest[0]), p)
			if err != nil {
				return err
			}
			items := make(jsonapi.Ls, 0, len(entries))
			for _, e := range entries {
				items = append(items, jsonapi.LsItem{Path: jsonapi.Path(e.Path), Type: e.Entry.Kind.String(), Size: e.Entry.Size, Mode: e.Entry.Mode()})
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
	addHereFlag(cmd, g)
	return cmd
}

func newExportCommand(g *globals) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "export [DIR] SNAP -o FILE",
		Short: "write snapshot SNAP as a POSIX tar archive (-o - for stdout)",
		Long: `export writes snapshot SNAP as a POSIX (PAX) tar archive to FILE, gzip
compressed when FILE ends in .tar.gz or .tgz; a name that asks for another
compression (.zst, .xz, .bz2, .zip, ...) is refused. -o - writes the plain
archive to stdout. JSON: {"snapshot": SNAP, "file": FILE}.`,
		Args: argsBetween(1, 2),
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
			gzipped, err := archiveKind(out)
			if err != nil {
				return err
			}
			store, proj, err := g.openProject(cmd.Context(), dir)
			if err != nil {
				return err
			}
			if out == "-" {
				return store.Export(cmd.Context(), proj.dir, casckpt.Ref(rest[0]), g.io.out)
			}
			if err := exportFile(cmd, store, proj.dir, rest[0], out, gzipped); err != nil {
				return err
			}
			abs, _ := filepath.Abs(out)
			return g.emit(jsonapi.Export{Snapshot: rest[0], File: jsonapi.Path(abs)}, func(w io.Writer) {
				fmt.Fprintf(w, "wrote %s\n", out)
			})
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "archive file to write, - for stdout")
	addHereFlag(cmd, g)
	return cmd
}

// archiveKind says whether export writes file out gzip compressed (.tar.gz,
// .tgz), refusing a name that asks for a compression it does not write.
func archiveKind(out string) (gzipped bool, err error) {
	lower := strings.ToLower(out)
	switch {
	case strings.HasSuffix(lower, ".tar.gz") || strings.HasSuffix(lower, ".tgz"):
		return true, nil
	}
	for _, ext := range []string{".gz", ".zst", ".zstd", ".xz", ".bz2", ".lz4", ".lz", ".lzma", ".z", ".zip", ".7z", ".tbz", ".tbz2", ".txz", ".tzst"} {
		if strings.HasSuffix(lower, ext) {
			return false, usagef("export writes a .tar or .tar.gz (.tgz) archive; %q asks for another format", out)
		}
	}
	return false, nil
}

// exportFile writes the archive (gzip compressed if gzipped) to a temporary
// file beside out and renames it into place, so a failed export leaves no
// partial archive.
func exportFile(cmd *cobra.Command, store *casckpt.Store, dir, ref, out string, gzipped bool) error {
	tmp, err := os.CreateTemp(filepath.Dir(out), ".casckpt-export-*")
	if err != nil {
		return err
	}
	if gzipped {
		zw := gzip.NewWriter(tmp)
		if err = store.Export(cmd.Context(), dir, casckpt.Ref(ref), zw); err == nil {
			err = zw.Close()
		}
	} else {
		err = store.Export(cmd.Context(), dir, casckpt.Ref(ref), tmp)
	}
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
