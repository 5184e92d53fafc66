package casckpt

import (
	"bytes"
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
	_, err := s.CatWith(ctx, dir, ref, p, w, CatOptions{})
	return err
}

// CatOptions tune CatWith. The zero value is Cat.
type CatOptions struct {
	// Fallback: when snapshot ref's copy of the file cannot be read whole
	// (its data is damaged: ErrDamaged) or Check refuses it, the newest
	// older snapshot of the project whose copy can (and passes) is used,
	// trying each in turn; an older snapshot that lacks the file is passed
	// over too. CatResult names the snapshot used and those passed over.
	Fallback bool
	// Check, if set, is called with the bytes of each snapshot tried; an
	// error refuses them (the reason is the path, a space and its text).
	// CheckJSON refuses what does not parse as JSON.
	Check func([]byte) error
}

// CatResult says which snapshot CatWith wrote the bytes of.
type CatResult struct {
	ID ID
	// Tried are the snapshots passed over, newest first. Never nil.
	Tried []TriedSnapshot
}

// CatWith is Cat with options. With Fallback or Check, the bytes are read
// and checked whole before any is written to w; when no snapshot is left
// to try, the error is a *NoIntactError.
func (s *Store) CatWith(ctx context.Context, dir string, ref Ref, p string, w io.Writer, opts CatOptions) (CatResult, error) {
	res := CatResult{Tried: []TriedSnapshot{}}
	clean, err := relPath(p)
	if err != nil {
		return res, err
	}
	workdir, err := s.readWorkdir(dir)
	if err != nil {
		return res, err
	}
	var b bytes.Buffer
	err = s.read(ctx, func(v view) error {
		snaps, err := v.Tx.Snapshots(workdir)
		if err != nil {
			return err
		}
		sn, i, err := resolve(snaps, ref, workdir)
		if err != nil {
			return err
		}
		if !opts.Fallback && opts.Check == nil {
			res.ID = sn.ID
			return damaged(sn, catEntry(ctx, v, sn, clean, p, w))
		}
		candidates := snaps[i : i+1]
		if opts.Fallback {
			candidates = snaps[i:]
		}
		used, tried, err := fallback(ctx, candidates, p, func(c record) (string, error) {
			b.Reset()
			err := catEntry(ctx, v, c, clean, p, &b)
			if c.ID != sn.ID && (errors.Is(err, ErrNotFound) || errors.Is(err, ErrRefused)) {
				return err.Error(), nil // not a file in this older snapshot
			}
			if reason, err := damageReason(c, err); reason != "" || err != nil {
				return reason, err
			}
			if opts.Check == nil {
				return "", nil
			}
			if err := opts.Check(b.Bytes()); err != nil {
				return fmt.Sprintf("%s %v", p, err), nil
			}
			return "", nil
		})
		res.ID, res.Tried = used.ID, tried
		return err
	})
	if err != nil || (!opts.Fallback && opts.Check == nil) {
		return res, err
	}
	_, err = w.Write(b.Bytes())
	return res, err
}

// catEntry writes the bytes of clean (p as given) in snapshot sn to w.
func catEntry(ctx context.Context, v view, sn record, clean, p string, w io.Writer) error {
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
