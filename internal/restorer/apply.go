package restorer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sync/errgroup"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/manifest"
)

// Apply carries out plan on dst, reading file content from g. Removals
// come first, deepest first: deleted entries and the old side of type
// changes. Then creations, parents before children: directories, and every
// file and link, in parallel, written to a new temporary file beside its
// target, synced and renamed over it. No inode is changed in place, so a
// hard link to a file outside the tree keeps its bytes and mode; files and
// directories are created with 0666, 0777 for executables and directories,
// less the umask, as git creates them. Last, every directory whose entries
// changed is synced.
//
// A failing step stops the restore with an error naming its path; files
// already replaced stay replaced. progress, if set, is called as files and
// links are written, from any goroutine, never twice at once: first with
// nothing done, last (unless a step fails) with everything done, against
// the totals plan.Written and plan.Bytes.
func Apply(ctx context.Context, dst FS, g cas.Getter, plan Plan, progress func(filesDone, filesTotal, bytesDone, bytesTotal int64)) error {
	touched := map[string]bool{} // directories whose entries changed
	if err := removeOld(dst, plan.Changes, touched); err != nil {
		return err
	}
	err := create(ctx, dst, g, plan, newReporter(plan, progress), touched)
	for d := range touched {
		if serr := syncDir(dst, d); serr != nil && err == nil {
			err = fmt.Errorf("restore: sync directory %s: %w; the files are in place but may not survive a power loss: check the disk", d, serr)
		}
	}
	return err
}

// removeOld removes, deepest first, the entries that plan deletes or
// replaces with one of another kind, and marks their parents in touched.
// A deleted directory that still holds entries (excluded ones, which are
// never touched) is left in place.
func removeOld(dst FS, plan []manifest.Change, touched map[string]bool) error {
	var removals []manifest.Change
	for _, c := range plan {
		if c.Status == manifest.Deleted || c.Status == manifest.TypeChanged {
			removals = append(removals, c)
		}
	}
	slices.SortStableFunc(removals, func(a, b manifest.Change) int {
		return strings.Count(b.Path, "/") - strings.Count(a.Path, "/")
	})
	for _, c := range removals {
		err := dst.Remove(filepath.FromSlash(c.Path))
		switch {
		case err == nil, errors.Is(err, fs.ErrNotExist):
			delete(touched, c.Path) // gone: nothing in it to sync
		case c.Old.Kind == manifest.KindDir && errors.Is(err, syscall.ENOTEMPTY) && c.Status == manifest.Deleted:
			// It holds excluded entries, which are never touched.
		default:
			return fmt.Errorf("restore: delete %s: %w", c.Path, err)
		}
		touched[path.Dir(c.Path)] = true
	}
	return nil
}

// create makes the directories of plan in order, and writes its files and
// links in parallel, marking their parents in touched. After a failure it
// starts no more writes and waits for those under way.
func create(ctx context.Context, dst FS, g cas.Getter, plan Plan, report func(files, bytes int64), touched map[string]bool) error {
	report(0, 0)
	eg, gctx := errgroup.WithContext(ctx)
	eg.SetLimit(4 * runtime.GOMAXPROCS(0)) // fsyncs overlap
	var failed error
	for _, c := range plan.Changes {
		if c.Status == manifest.Deleted {
			continue
		}
		p := filepath.FromSlash(c.Path)
		touched[path.Dir(c.Path)] = true
		if c.New.Kind == manifest.KindDir {
			if err := dst.Mkdir(p, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
				failed = fmt.Errorf("restore: create directory %s: %w", c.Path, err)
				break
			}
			continue
		}
		eg.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err // another write failed: replace no more
			}
			var err error
			if c.New.Kind == manifest.KindSymlink {
				err = replaceLink(dst, p, c.New.Target)
			} else {
				err = replaceFile(gctx, dst, p, g, c.New)
			}
			if err != nil {
				return fmt.Errorf("restore: write %s: %w", c.Path, err)
			}
			var size int64
			if c.New.Kind == manifest.KindFile {
				size = c.New.Size
			}
			report(1, size)
			return nil
		})
	}
	err := eg.Wait()
	if failed != nil {
		err = failed
	}
	return err
}

// newReporter returns a function that adds files and bytes to the work
// done and calls progress (if set) with the running totals, one call at a
// time.
func newReporter(plan Plan, progress func(filesDone, filesTotal, bytesDone, bytesTotal int64)) func(files, bytes int64) {
	var (
		mu                   sync.Mutex
		filesDone, bytesDone int64
	)
	filesTotal, bytesTotal := int64(plan.Written), plan.Bytes
	return func(files, bytes int64) {
		if progress == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		filesDone += files
		bytesDone += bytes
		progress(filesDone, filesTotal, bytesDone, bytesTotal)
	}
}

// syncDir makes the renames and removals in directory d durable. A
// directory a restore removed needs none.
func syncDir(dst FS, d string) error {
	f, err := dst.Open(filepath.FromSlash(d))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// replaceLink replaces p with a new symbolic link to target.
func replaceLink(dst FS, p, target string) error {
	tmp := filepath.Join(filepath.Dir(p), manifest.TempName())
	if err := dst.Symlink(target, tmp); err != nil {
		return err
	}
	if err := dst.Rename(tmp, p); err != nil {
		_ = dst.Remove(tmp)
		return err
	}
	return nil
}

// replaceFile writes e's content to a new temporary file beside p, syncs
// it and renames it over p, holding it locked until then: a crash leaves
// p old or new, and a killed restore's temporary file is recognisably
// nobody's.
func replaceFile(ctx context.Context, dst FS, p string, g cas.Getter, e manifest.Entry) error {
	perm := fs.FileMode(0o666)
	if e.Exec {
		perm = 0o777
	}
	f, tmp, err := dst.CreateTemp(filepath.Dir(p), perm)
	if err != nil {
		return err
	}
	err = func() error {
		for _, id := range e.Chunks {
			b, err := g.Get(ctx, id)
			if err != nil {
				return err
			}
			if _, err := f.Write(b); err != nil {
				return err
			}
		}
		if err := f.Sync(); err != nil {
			return err
		}
		return dst.Rename(tmp, p)
	}()
	if err != nil {
		_ = dst.Remove(tmp)
	}
	if cerr := f.Close(); err == nil { // releases the lock
		err = cerr
	}
	return err
}
