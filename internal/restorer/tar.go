package restorer

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/manifest"
)

// Export writes plan, which must only add entries (a PlanTree), to w as a
// POSIX (PAX) tar archive, in plan order: directories (named with a
// trailing slash) before their contents, files with their bytes read from
// g, links with their targets, every entry with its mode and modification
// time modTime. A file whose content is not the size its entry says fails
// the export; what was written before an error stays written.
func Export(ctx context.Context, w io.Writer, g cas.Getter, plan Plan, modTime time.Time) error {
	tw := tar.NewWriter(w)
	for _, c := range plan.Changes {
		if c.Status != manifest.Added {
			return fmt.Errorf("export %s: a tar archive only adds entries, and this one is %s", c.Path, c.Status)
		}
		if err := writeEntry(ctx, tw, g, c.Path, c.New, modTime); err != nil {
			return err
		}
	}
	return tw.Close()
}

// writeEntry writes entry e at path p to tw.
func writeEntry(ctx context.Context, tw *tar.Writer, g cas.Getter, p string, e manifest.Entry, modTime time.Time) error {
	h := &tar.Header{Name: p, Mode: int64(e.Mode()), ModTime: modTime, Format: tar.FormatPAX}
	switch e.Kind {
	case manifest.KindDir:
		h.Typeflag, h.Name = tar.TypeDir, p+"/"
	case manifest.KindSymlink:
		h.Typeflag, h.Linkname = tar.TypeSymlink, e.Target
	default:
		h.Typeflag, h.Size = tar.TypeReg, e.Size
	}
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	if e.Kind != manifest.KindFile {
		return nil
	}
	n, err := io.Copy(tw, manifest.NewFileReader(ctx, g, e))
	if err != nil {
		return err
	}
	if n != e.Size {
		return fmt.Errorf("%s: %d bytes, its entry says %d", p, n, e.Size)
	}
	return nil
}
