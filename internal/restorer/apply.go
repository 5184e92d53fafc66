package restorer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/internal/osfs"
	"github.com/casckpt/casckpt/manifest"
)

// Options tune Apply. The zero value reports no progress and checks
// nothing.
type Options struct {
	// Progress, if set, is called as files and links are written (or left
	// alone), from any goroutine, never twice at once: first with nothing
	// done, last (unless a step fails) with everything done, against the
	// totals plan.Written and plan.Bytes.
	Progress func(filesDone, filesTotal, bytesDone, bytesTotal int64)
	// SameFile, if set, makes Apply check each path right before it
	// deletes or replaces what is there, or writes where nothing was: the
	// path must still hold what the plan found (a change's Old side,
	// nothing for an addition): a directory, a link to the same target, or
	// a regular file for which SameFile (given the path and what lstat
	// says of it now) reports that it is as the plan's scan saw it. A path
	// that changed is left alone, with every change below it: someone saved
	// it after the scan.
	SameFile func(p string, now fs.FileInfo) bool
	// KeepOld, if set, is given each regular file Apply replaces or
	// deletes, opened (FS.Open) right before the rename or removal that
	// unlinks it, so that its blocks are freed when the caller closes it,
	// not in that call: a file system that discards freed blocks at once
	// (ext4 mounted with discard and without a journal, as the VMs agents
	// run in are) waits on the disk there, 1-4 ms a file. A file that
	// cannot be opened is unlinked all the same.
	KeepOld func(old File)
}

// ReasonChangedDuring is why Apply leaves a path alone: it changed after
// the scan the plan was made from.
const ReasonChangedDuring = "changed during restore"

// Apply carries out plan on dst, reading file content from g. Removals
// come first, deepest first: deleted entries and the old side of type
// changes. Then creations, parents before children: directories, then
// the files and links, in batches of up to maxOpenTemps: each written, in
// parallel, to a new temporary file (or link) beside its target, the
// batch's files synced, all at once, then each renamed over its target.
// No inode is changed in place, so a hard link to a file outside the tree
// keeps its bytes and mode; files and directories are created with 0666,
// 0777 for executables and directories, less the umask, as git creates
// them. Last, every directory whose entries changed is synced.
//
// With opts.SameFile, the paths left alone because they changed after
// the scan (see Options) are returned, in no particular order; the plan
// less them (Plan.Without) is what was done. A failing step stops the
// restore with an error naming its path; files already replaced stay
// replaced.
func Apply(ctx context.Context, dst FS, g cas.Getter, plan Plan, opts Options) ([]string, error) {
	touched := map[string]bool{} // directories whose entries changed
	gd := &guard{dst: dst, same: opts.SameFile, keepOld: opts.KeepOld}
	if err := removeOld(dst, plan.Changes, touched, gd); err != nil {
		return gd.left, err
	}
	err := create(ctx, dst, g, plan, newReporter(plan, opts.Progress), touched, gd)
	if serr := syncDirs(dst, touched); serr != nil && err == nil {
		err = serr
	}
	return gd.left, err
}

// syncsInFlight is how many files or directories Apply writes or syncs
// at once. A sync waits on the disk, not on a core, and a journaling file
// system commits the syncs that overlap in one commit: with 8 at once
// (4 per core on 2 cores), W5's 60 files and 33 directories took a dozen
// commits, each a wait on a disk that other processes share.
func syncsInFlight() int { return max(32, 4*runtime.GOMAXPROCS(0)) }

// syncDirs syncs every directory of dirs, in parallel (a journaling file
// system commits fsyncs that overlap together; one after the other, each
// waits for its own commit), and returns the error of the first that
// failed, in path order. Every one is tried.
func syncDirs(dst FS, dirs map[string]bool) error {
	sorted := slices.Sorted(maps.Keys(dirs))
	errs := make([]error, len(sorted))
	var wg sync.WaitGroup
	limit := make(chan struct{}, syncsInFlight())
	for i, d := range sorted {
		wg.Add(1)
		limit <- struct{}{}
		go func() {
			defer func() { <-limit; wg.Done() }()
			errs[i] = syncDir(dst, d)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("restore: sync directory %s: %w; the files are in place but may not survive a power loss: check the disk", sorted[i], err)
		}
	}
	return nil
}

// guard checks, right before Apply changes a path, that it still holds
// what the plan found, and keeps the paths left alone. Without SameFile it
// checks nothing. It hands the files Apply unlinks to keepOld (unlink).
// It is safe for concurrent use.
type guard struct {
	dst     FS
	same    func(p string, now fs.FileInfo) bool
	keepOld func(old File)
	mu      sync.Mutex
	left    []string
}

// unlink runs unlink, which unlinks slash path p, where the plan found e:
// for a regular file, with keepOld set, after opening p and handing it
// to keepOld.
func (gd *guard) unlink(p string, e manifest.Entry, unlink func() error) error {
	if gd.keepOld != nil && e.Kind == manifest.KindFile {
		if old, err := gd.dst.Open(filepath.FromSlash(p)); err == nil {
			gd.keepOld(old)
		}
	}
	return unlink()
}

// unchanged reports whether the slash path p still holds e (Kind 0:
// nothing). An lstat or readlink that fails otherwise than with
// fs.ErrNotExist is an error.
func (gd *guard) unchanged(p string, e manifest.Entry) (bool, error) {
	if gd.same == nil {
		return true, nil
	}
	name := filepath.FromSlash(p)
	info, err := gd.dst.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return e.Kind == 0, nil
	}
	if err != nil {
		return false, fmt.Errorf("restore: check %s: %w", p, err)
	}
	switch e.Kind {
	case manifest.KindDir:
		return info.IsDir(), nil
	case manifest.KindFile:
		return info.Mode().IsRegular() && gd.same(p, info), nil
	case manifest.KindSymlink:
		if info.Mode()&fs.ModeSymlink == 0 {
			return false, nil
		}
		target, err := gd.dst.Readlink(name)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("restore: check %s: %w", p, err)
		}
		return target == e.Target, nil
	}
	return false, nil // something is where the plan found nothing
}

// room reports whether a directory can be made at p: nothing is there, or
// a directory.
func (gd *guard) room(p string) (bool, error) {
	ok, err := gd.unchanged(p, manifest.Entry{})
	if err == nil && !ok {
		ok, err = gd.unchanged(p, manifest.Entry{Kind: manifest.KindDir})
	}
	return ok, err
}

// leave records that p is left alone.
func (gd *guard) leave(p string) {
	gd.mu.Lock()
	defer gd.mu.Unlock()
	gd.left = append(gd.left, p)
}

// leaveBelow reports whether p, or a directory above it, is left alone,
// and then records p as left too (once).
func (gd *guard) leaveBelow(p string) bool {
	gd.mu.Lock()
	defer gd.mu.Unlock()
	for _, l := range gd.left {
		if l == p {
			return true
		}
		if under(p, l) {
			gd.left = append(gd.left, p)
			return true
		}
	}
	return false
}

// removeOld removes, deepest first, the entries that plan deletes or
// replaces with one of another kind, and marks their parents in touched.
// A deleted directory that still holds entries (excluded ones, which are
// never touched, or ones left alone) is left in place; so is, with gd
// checking, a path that changed since the scan, and a directory to replace
// that holds entries made since.
func removeOld(dst FS, plan []manifest.Change, touched map[string]bool, gd *guard) error {
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
		if ok, err := gd.unchanged(c.Path, c.Old); err != nil {
			return err
		} else if !ok {
			gd.leave(c.Path)
			continue
		}
		err := gd.unlink(c.Path, c.Old, func() error { return dst.Remove(filepath.FromSlash(c.Path)) })
		notEmpty := c.Old.Kind == manifest.KindDir && osfs.IsNotEmpty(err)
		switch {
		case err == nil, errors.Is(err, fs.ErrNotExist):
			delete(touched, c.Path) // gone: nothing in it to sync
		case notEmpty && c.Status == manifest.Deleted:
			// It holds excluded entries, which are never touched.
		case notEmpty && gd.same != nil:
			gd.leave(c.Path) // it holds entries made since the scan
			continue
		default:
			return fmt.Errorf("restore: delete %s: %w", c.Path, err)
		}
		touched[path.Dir(c.Path)] = true
	}
	return nil
}

// create makes the directories of plan in order, then replaces its files
// and links (replaceAll), marking their parents in touched. A path gd
// leaves alone, or one below it, is not written. After a failure it
// starts no more writes.
func create(ctx context.Context, dst FS, g cas.Getter, plan Plan, report func(files, bytes int64), touched map[string]bool, gd *guard) error {
	report(0, 0)
	var rs []*replacement
	for _, c := range plan.Changes {
		if c.Status == manifest.Deleted || gd.leaveBelow(c.Path) {
			continue
		}
		touched[path.Dir(c.Path)] = true
		if c.New.Kind != manifest.KindDir {
			r := &replacement{c: c}
			if c.Status == manifest.Modified { // else removeOld removed what was there
				r.before = c.Old
			}
			rs = append(rs, r)
			continue
		}
		if ok, err := gd.room(c.Path); err != nil {
			return err
		} else if !ok {
			gd.leave(c.Path)
			continue
		}
		if err := dst.Mkdir(filepath.FromSlash(c.Path), 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("restore: create directory %s: %w", c.Path, err)
		}
	}
	return replaceAll(ctx, dst, g, rs, report, gd)
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
