package restorer

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"

	"golang.org/x/sync/errgroup"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/manifest"
)

// maxOpenTemps bounds the temporary files Apply holds open (and locked)
// between writing them and renaming them over their targets: the files
// and links of a plan are replaced in batches of this many.
const maxOpenTemps = 256

// replacement is a file or link of a plan on its way into place.
type replacement struct {
	c      manifest.Change
	before manifest.Entry // what the plan found at c.Path (Kind 0: nothing)
	tmp    string         // the temporary file or link; "" until made
	f      File           // the open temporary file; nil for a link
	done   bool           // tmp was renamed over c.Path
}

// replaceAll replaces the files and links of rs, in batches of
// maxOpenTemps (replaceBatch), reporting each one done or left alone.
func replaceAll(ctx context.Context, dst FS, g cas.Getter, rs []*replacement, report func(files, bytes int64), gd *guard) error {
	for len(rs) > 0 {
		n := min(len(rs), maxOpenTemps)
		if err := replaceBatch(ctx, dst, g, rs[:n], report, gd); err != nil {
			return err
		}
		rs = rs[n:]
	}
	return nil
}

// replaceBatch writes each of rs to a new temporary file or link beside
// its target, in parallel, syncs the files, all at once, and only then,
// in order, renames each over its target once gd allows (leaving alone,
// in gd, a path that changed since the scan): no rename waits behind a
// sync, and a crash leaves each target old or new. A failure stops it:
// every temporary file not renamed is removed, and every file is closed
// (releasing its lock), whatever fails.
func replaceBatch(ctx context.Context, dst FS, g cas.Getter, rs []*replacement, report func(files, bytes int64), gd *guard) (err error) {
	defer func() {
		for _, r := range rs {
			if r.tmp != "" && !r.done {
				_ = dst.Remove(r.tmp) // before Close: held locked until gone
			}
			if r.f == nil {
				continue
			}
			if cerr := r.f.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("restore: write %s: %w", r.c.Path, cerr)
			}
		}
	}()
	eg, gctx := errgroup.WithContext(ctx)
	eg.SetLimit(syncsInFlight())
	for _, r := range rs {
		eg.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err // another write failed: write no more
			}
			if err := r.write(gctx, dst, g); err != nil {
				return fmt.Errorf("restore: write %s: %w", r.c.Path, err)
			}
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return err
	}
	if err := syncAll(rs); err != nil {
		return err
	}
	for _, r := range rs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := r.rename(dst, gd); err != nil {
			return fmt.Errorf("restore: write %s: %w", r.c.Path, err)
		}
		var size int64
		if r.c.New.Kind == manifest.KindFile {
			size = r.c.New.Size
		}
		report(1, size)
	}
	return nil
}

// write makes r's temporary file, with r's content, or link, beside its
// target.
func (r *replacement) write(ctx context.Context, dst FS, g cas.Getter) error {
	dir := filepath.Dir(filepath.FromSlash(r.c.Path))
	if r.c.New.Kind == manifest.KindSymlink {
		tmp := filepath.Join(dir, manifest.TempName())
		if err := dst.Symlink(r.c.New.Target, tmp); err != nil {
			return err
		}
		r.tmp = tmp
		return nil
	}
	perm := fs.FileMode(0o666)
	if r.c.New.Exec {
		perm = 0o777
	}
	f, tmp, err := dst.CreateTemp(dir, perm)
	if err != nil {
		return err
	}
	r.f, r.tmp = f, tmp
	for _, id := range r.c.New.Chunks {
		b, err := g.Get(ctx, id)
		if err != nil {
			return err
		}
		if _, err := f.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// rename renames r's temporary file or link over its target, unless the
// target changed since the scan (then it is left, in gd).
func (r *replacement) rename(dst FS, gd *guard) error {
	ok, err := gd.unchanged(r.c.Path, r.before)
	if err != nil {
		return err
	}
	if !ok {
		gd.leave(r.c.Path)
		return nil
	}
	if err := gd.unlink(r.c.Path, r.before, func() error { return dst.Rename(r.tmp, filepath.FromSlash(r.c.Path)) }); err != nil {
		return err
	}
	r.done = true
	return nil
}

// syncAll syncs the temporary files of rs, all at once (a journaling
// file system commits the syncs that overlap together, and no rename
// waits for them), and returns the first error, in order.
func syncAll(rs []*replacement) error {
	errs := make([]error, len(rs))
	var eg errgroup.Group
	eg.SetLimit(syncsInFlight())
	for i, r := range rs {
		if r.f == nil {
			continue
		}
		eg.Go(func() error {
			errs[i] = r.f.Sync()
			return nil
		})
	}
	_ = eg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("restore: write %s: %w", rs[i].c.Path, err)
		}
	}
	return nil
}
