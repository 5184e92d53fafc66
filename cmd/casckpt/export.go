package main

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

const exportUse = "export [DIR] SNAP -o FILE"

// exportOptions are the flags of export.
type exportOptions struct {
	output string
}

func newExportCommand(g *globals) *cobra.Command {
	var o exportOptions
	cmd := &cobra.Command{
		Use:   exportUse,
		Short: "write snapshot SNAP as a POSIX tar archive (-o - for stdout)",
		Long: `export writes snapshot SNAP as a POSIX (PAX) tar archive to FILE, gzip
compressed when FILE ends in .tar.gz or .tgz; a name that asks for another
compression (.zst, .xz, .bz2, .zip, ...) is refused. -o - writes the plain
archive to stdout. JSON: {"snapshot": SNAP, "file": FILE}.`,
		Args: argsBetween(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error { return runExport(cmd.Context(), o, g, args) },
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "archive file to write, - for stdout")
	addHereFlag(cmd, g)
	return cmd
}

// runExport writes the snapshot args ([DIR] SNAP) name as a tar archive
// to -o FILE, or to stdout.
func runExport(ctx context.Context, o exportOptions, g *globals, args []string) error {
	dir, rest, err := splitDirExact(exportUse, args, 1)
	if err != nil {
		return err
	}
	out := o.output
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
	store, proj, err := g.openProject(ctx, dir)
	if err != nil {
		return err
	}
	if out == "-" {
		return store.Export(ctx, proj.dir, casckpt.Ref(rest[0]), g.io.out)
	}
	if err := exportFile(ctx, store, proj.dir, rest[0], out, gzipped); err != nil {
		return err
	}
	abs, _ := filepath.Abs(out)
	return g.emit(jsonapi.Export{Snapshot: rest[0], File: jsonapi.Path(abs)}, func(w io.Writer) {
		fmt.Fprintf(w, "wrote %s\n", out)
	})
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
func exportFile(ctx context.Context, store *casckpt.Store, dir, ref, out string, gzipped bool) error {
	tmp, err := os.CreateTemp(filepath.Dir(out), ".casckpt-export-*")
	if err != nil {
		return err
	}
	if gzipped {
		zw := gzip.NewWriter(tmp)
		if err = store.Export(ctx, dir, casckpt.Ref(ref), zw); err == nil {
			err = zw.Close()
		}
	} else {
		err = store.Export(ctx, dir, casckpt.Ref(ref), tmp)
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
