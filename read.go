package casckpt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"

	"github.com/casckpt/casckpt/internal/restorer"
	"github.com/casckpt/casckpt/manifest"
)

// withSnapshot resolves ref in the project of dir and runs fn under a read
// view.
func (s *Store) withSnapshot(ctx context.Context, dir string, ref Ref, fn func(v view, sn record) error) error {
	workdir, err := s.readWorkdir(dir)
	if err != nil {
		return err
	}
	return s.read(ctx, func(v view) error {
		snaps, err := v.Tx.Snapshots(workdir)
		if err != nil {
			return err
		}
		sn, _, err := resolve(snaps, ref, workdir)
		if err != nil {
			return err
		}
		return damaged(sn, fn(v, sn))
	})
}

// Cat writes one file's bytes from snapshot ref to w (a link's target text).
func (s *Store) Cat(ctx context.Context, dir string, ref Ref, p string, w io.Writer) error {
	clean, err := relPath(p)
	if err != nil {
		return err
	}
	return s.withSnapshot(ctx, dir, ref, func(v view, sn record) error {
		e, err := manifest.Lookup(ctx, v.Objects, sn.Root, clean)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w in snapshot %s", p, ErrNotFound, sn.ID.Short())
		}
		if err != nil {
			return err
		}
		switch e.Kind {
		case manifest.KindDir:
			return fmt.Errorf("%w: %s is a directory in snapshot %s; use ls", ErrRefused, p, sn.ID.Short())
		case manifest.KindSymlink:
			_, err = io.WriteString(w, e.Target)
			return err
		}
		_, err = io.Copy(w, manifest.NewFileReader(ctx, v.Objects, e))
		return err
	})
}

// LsEntry is one entry of a snapshot listing.
type LsEntry struct {
	Path  string
	Entry manifest.Entry
}

// Ls lists every entry of snapshot ref, parents before children.
func (s *Store) Ls(ctx context.Context, dir string, ref Ref) ([]LsEntry, error) {
	return s.LsPath(ctx, dir, ref, "")
}

// LsPath is Ls of what p (relative to the project; "" for all of it) is in
// the snapshot: a file or link itself, a directory's entries below it.
// Paths stay relative to the project.
func (s *Store) LsPath(ctx context.Context, dir string, ref Ref, p string) ([]LsEntry, error) {
	clean := ""
	if p != "" {
		var err error
		if clean, err = relPath(p); err != nil {
			return nil, err
		}
	}
	out := []LsEntry{}
	err := s.withSnapshot(ctx, dir, ref, func(v view, sn record) error {
		e, err := manifest.Lookup(ctx, v.Objects, sn.Root, clean)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w in snapshot %s", p, ErrNotFound, sn.ID.Short())
		}
		if err != nil {
			return err
		}
		if e.Kind != manifest.KindDir {
			out = append(out, LsEntry{Path: clean, Entry: e})
			return nil
		}
		return manifest.Walk(ctx, v.Objects, e.Tree, func(q string, e manifest.Entry) error {
			out = append(out, LsEntry{Path: path.Join(clean, q), Entry: e})
			return nil
		})
	})
	return out, err
}

// Export writes snapshot ref as a POSIX (PAX) tar archive to w.
func (s *Store) Export(ctx context.Context, dir string, ref Ref, w io.Writer) error {
	return s.withSnapshot(ctx, dir, ref, func(v view, sn record) error {
		plan, err := restorer.PlanTree(ctx, v.Objects, sn.Root)
		if err != nil {
			return err
		}
		return restorer.Export(ctx, w, v.Objects, plan, sn.Time)
	})
}
