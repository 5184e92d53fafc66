package casckpt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/scan"
	"github.com/casckpt/casckpt/manifest"
)

// RestoreOptions tune Restore. The zero value restores the whole tree.
type RestoreOptions struct {
	// Paths, relative to the project directory, restricts the restore to
	// these files or directories.
	Paths []string
	// DryRun computes what would change and changes nothing, taking no
	// pre-restore snapshot.
	DryRun bool
	// MaxFileSize and MaxFiles are the exclusion limits, as in
	// SnapshotOptions; paths they exclude that the snapshot lacks are
	// never touched. MaxFileSize defaults to the limit the snapshot was
	// taken with, so a file it left out as too large is never deleted.
	MaxFileSize int64
	MaxFiles    int
	// Progress, if set, is called as files and links are written, from any
	// goroutine: first with nothing done, last with everything done.
	// Totals count the files and links to write and their bytes.
	Progress func(filesDone, filesTotal, bytesDone, bytesTotal int64)
}

// RestoreResult says what Restore did (or, in a dry run, would do).
type RestoreResult struct {
	RestoredTo   cas.ID
	PreRestoreID cas.ID // zero when no pre-restore snapshot was taken
	Written      int    // files and links written
	Deleted      int    // files and links deleted
	DryRun       bool
	// Changes is the plan: every path written or deleted, in order.
	Changes []manifest.Change
	// Skipped names paths left alone because an excluded entry (ignored,
	// over the size limit, unreadable) the snapshot lacks is in the way.
	Skipped []string
}

// PreRestorePrefix starts the reason of every pre-restore snapshot.
const PreRestorePrefix = "pre-restore"

// Restore makes the project's working tree (or the given paths) equal to
// snapshot ref: every entry of the snapshot is written with its bytes,
// executable bit and link target, and every path a snapshot would capture
// that the snapshot lacks is deleted. Excluded paths the snapshot lacks
// are never touched (a path it holds is restored even if excluded now) and
// nothing is written outside the project directory, whatever links it
// holds. Files that already match are left as they are. It reads and
// verifies every tree and chunk it needs, then takes a pre-restore
// snapshot, and replaces each file atomically with a new one (never
// changing an inode in place). Temporary files of killed restores are
// removed.
func (s *Store) Restore(ctx context.Context, dir string, ref Ref, opts RestoreOptions) (_ RestoreResult, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverCorrupt(&err)
	res := RestoreResult{DryRun: opts.DryRun}
	workdir, err := ProjectDir(dir)
	if err != nil {
		return res, err
	}
	paths, err := cleanRestorePaths(opts.Paths)
	if err != nil {
		return res, err
	}
	ss, err := s.begin(ctx, false, !opts.DryRun)
	if err != nil {
		return res, err
	}
	defer ss.end()

	// Resolve the snapshot and check that it is whole before anything else.
	if err := ss.view(); err != nil {
		return res, err
	}
	snaps, err := ss.snapshots(workdir)
	if err != nil {
		return res, err
	}
	target, _, err := resolve(snaps, ref, workdir)
	if err != nil {
		return res, err
	}
	res.RestoredTo = target.ID
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = target.MaxFileSize
	}
	for _, p := range paths {
		if _, err := manifest.Lookup(ctx, ss.objects, target.Root, p); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return res, fmt.Errorf("restore %s: %w in snapshot %s", p, ErrNotFound, target.ID.Short())
			}
			return res, ss.refuseDamaged(ctx, snaps, target, err)
		}
	}
	// The snapshot's root must be readable; the rest is checked as the
	// plan reads it: every tree that differs from the current one is read
	// and verified by the diff, and every chunk to be written below. What
	// the snapshot shares with the current tree is stored by the
	// pre-restore snapshot and never needs reading.
	if _, err := manifest.Load(ctx, ss.objects, target.Root); err != nil {
		return res, ss.refuseDamaged(ctx, snaps, target, err)
	}

	// Scan the current tree once: in a dry run only hashed, else stored as
	// the pre-restore snapshot, which is committed only once everything
	// the plan writes has been read and verified: a refused restore
	// changes nothing, not even the list of snapshots. The current tree's
	// trees are kept in memory for the plan.
	var overlay *treeOverlay
	var current scan.Result
	var pending *pendingSnapshot
	if opts.DryRun {
		overlay = newTreeOverlay(ss.objects)
		current, err = scan.Scan(ctx, workdir, overlay, scan.Options{
			MaxFileSize: opts.MaxFileSize, MaxFiles: opts.MaxFiles,
			Cache: index.LoadStatCache(ss.tx, workdir), Trees: ss.objects, Skip: s.skipDirs(),
		})
	} else {
		ss.endView() // scanSnapshot opens its own
		pending, err = ss.scanSnapshot(ctx, workdir, SnapshotOptions{
			Reason:      fmt.Sprintf("%s: before restoring %s", PreRestorePrefix, target.ID.Short()),
			Keep:        -1, // a restore never drops snapshots
			MaxFileSize: opts.MaxFileSize, MaxFiles: opts.MaxFiles,
		}, func(w cas.Putter) cas.Putter {
			overlay = newTreeOverlay(ss.objects) // the view scanSnapshot opened
			return overlay.through(w)
		})
		if err != nil {
			return res, fmt.Errorf("pre-restore snapshot: %w", err)
		}
		current = pending.scanned
	}
	if err != nil {
		return res, err
	}
	if err := ss.plan(ctx, &res, workdir, overlay, current, target, paths); err != nil {
		if pending != nil {
			pending.abort()
		}
		return res, ss.refuseDamaged(ctx, snaps, target, err)
	}
	if opts.DryRun {
		return res, nil
	}
	pre, err := ss.commitSnapshot(ctx, pending)
	if err != nil {
		return res, fmt.Errorf("pre-restore snapshot: %w", err)
	}
	if pre.Created {
		res.PreRestoreID = pre.ID
	}
	if err := ss.view(); err != nil {
		return res, err
	}
	return res, applyRestore(ctx, workdir, ss.s.projectFS, ss.objects, res.Changes, opts.Progress)
}

// plan fills res with the changes that make the tree scanned as current
// equal to target (within paths), reading the current tree's objects from
// g, and reads and verifies every chunk to be written.
func (ss *session) plan(ctx context.Context, res *RestoreResult, workdir string, g cas.Getter, current scan.Result, target Snapshot, paths []string) error {
	changes, err := manifest.Diff(ctx, g, current.Root, target.Root)
	if err != nil {
		return err
	}
	res.Changes, res.Skipped = planRestore(changes, paths, current.Excluded, dirInProject(workdir))
	res.Written, res.Deleted = 0, 0
	var toVerify []cas.ID
	verified := map[cas.ID]bool{}
	for _, c := range res.Changes {
		if c.Status == manifest.Deleted && c.Old.Kind != manifest.KindDir {
			res.Deleted++
		}
		if c.Status != manifest.Deleted && c.New.Kind != manifest.KindDir {
			res.Written++
		}
		if c.Status != manifest.Deleted && c.New.Kind == manifest.KindFile {
			for _, id := range c.New.Chunks {
				if !verified[id] {
					verified[id] = true
					toVerify = append(toVerify, id)
				}
			}
		}
	}
	return ss.verifyChunks(ctx, toVerify)
}

// cleanRestorePaths checks restore paths; "." (or none) is the whole tree.
func cleanRestorePaths(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		c, err := relPath(p)
		if err != nil {
			return nil, err
		}
		if c == "" {
			return nil, nil
		}
		out = append(out, c)
	}
	return out, nil
}

// relPath cleans a path given relative to the project directory, refusing
// absolute paths and paths that lead outside. "." yields "".
func relPath(p string) (string, error) {
	if p == "" || filepath.IsAbs(p) {
		return "", fmt.Errorf("%w: path %q must be relative to the project directory", ErrRefused, p)
	}
	c := path.Clean(filepath.ToSlash(p))
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("%w: path %q leads outside the project directory", ErrRefused, p)
	}
	if c == "." {
		return "", nil
	}
	return c, nil
}

// under reports whether p is base or inside it.
func under(p, base string) bool {
	return p == base || strings.HasPrefix(p, base+"/")
}

// planRestore keeps the changes inside paths (all when paths is empty), with
// the directories needed above them. Exclusions protect only what the
// snapshot lacks: a path the snapshot holds is restored even where it is
// excluded now (a file that grew past the size limit, a path ignored
// since), unless an excluded entry of the other kind (a directory for a
// file or link, or the reverse; isDir tells which excluded paths are
// directories) is there. Dropped are the changes an excluded entry is in the way of: a
// deletion at or under an excluded path, and anything at or under a
// directory to be replaced that holds excluded entries or an excluded
// entry of the other kind.
func planRestore(changes []manifest.Change, paths, excluded []string, isDir func(p string) bool) (plan []manifest.Change, skipped []string) {
	isExcluded := make(map[string]bool, len(excluded))
	for _, e := range excluded {
		isExcluded[e] = true
	}
	var stuck []string // paths that cannot be replaced without touching an excluded entry
	for _, c := range changes {
		if c.Status == manifest.TypeChanged && c.Old.Kind == manifest.KindDir {
			for _, e := range excluded {
				if strings.HasPrefix(e, c.Path+"/") {
					stuck = append(stuck, c.Path)
					break
				}
			}
		}
		if c.Status != manifest.Deleted && isExcluded[c.Path] && isDir(c.Path) != (c.New.Kind == manifest.KindDir) {
			stuck = append(stuck, c.Path)
		}
	}
	blocked := func(c manifest.Change) bool {
		for _, s := range stuck {
			if under(c.Path, s) {
				return true
			}
		}
		if c.Status != manifest.Deleted {
			return false
		}
		for _, e := range excluded {
			if under(c.Path, e) {
				return true
			}
		}
		return false
	}
	wanted := func(c manifest.Change) bool {
		if len(paths) == 0 {
			return true
		}
		for _, p := range paths {
			if under(c.Path, p) {
				return true
			}
			// A directory that must exist (or replace a file) above p.
			if strings.HasPrefix(p, c.Path+"/") && c.Status != manifest.Deleted && c.New.Kind == manifest.KindDir {
				return true
			}
		}
		return false
	}
	plan, skipped = []manifest.Change{}, []string{}
	for _, c := range changes {
		if !wanted(c) {
			continue
		}
		if blocked(c) {
			skipped = append(skipped, c.Path)
			continue
		}
		plan = append(plan, c)
	}
	return plan, skipped
}

// dirInProject returns a function that reports whether p, relative to
// workdir, is a directory there (following no link).
func dirInProject(workdir string) func(p string) bool {
	return func(p string) bool {
		root, err := os.OpenRoot(workdir)
		if err != nil {
			return false
		}
		defer root.Close()
		st, err := root.Lstat(filepath.FromSlash(p))
		return err == nil && st.IsDir()
	}
}

// checkData verifies every tree and chunk of sn, reading each once.
func (ss *session) checkData(ctx context.Context, sn Snapshot) error {
	seen := map[cas.ID]bool{}
	var chunks []cas.ID
	err := manifest.Walk(ctx, ss.objects, sn.Root, func(_ string, e manifest.Entry) error {
		for _, id := range e.Chunks {
			if !seen[id] {
				seen[id] = true
				chunks = append(chunks, id)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return ss.verifyChunks(ctx, chunks)
}

// verifyChunks reads and checks chunks, in parallel.
func (ss *session) verifyChunks(ctx context.Context, chunks []cas.ID) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, id := range chunks {
		g.Go(func() error {
			_, err := ss.objects.Get(gctx, id)
			return err
		})
	}
	return g.Wait()
}

// refuseDamaged explains that target cannot be restored and names the
// newest snapshot of the project that is complete.
func (ss *session) refuseDamaged(ctx context.Context, snaps []Snapshot, target Snapshot, cause error) error {
	err := damaged(target, cause)
	if !errors.Is(err, ErrDamaged) {
		return err
	}
	for _, sn := range snaps {
		if sn.ID != target.ID && ss.checkData(ctx, sn) == nil {
			return fmt.Errorf("%w; nothing was changed; the newest intact snapshot is %s", err, sn.ID)
		}
	}
	return fmt.Errorf("%w; nothing was changed; no intact snapshot of this project is left", err)
}

// projectFS is what a restore does to a project tree: the real one is an
// os.Root, so no link in the tree can lead a write outside it; tests wrap
// it to fail any step.
type projectFS interface {
	// CreateTemp creates a new hidden temporary file in directory dir
	// with mode perm less the umask, locked (flock) until it is closed,
	// and returns it with its name. The caller closes it.
	CreateTemp(dir string, perm fs.FileMode) (projectFile, string, error)
	Open(name string) (projectFile, error)
	Remove(name string) error
	Mkdir(name string, perm fs.FileMode) error
	Symlink(oldname, newname string) error
	Rename(oldname, newname string) error
}

// projectFile is what a restore does to an open file or directory.
type projectFile interface {
	io.Writer
	Sync() error
	Close() error
}

// osRoot is the real projectFS.
type osRoot struct{ *os.Root }

func rootFS(r *os.Root) projectFS { return osRoot{r} }

func (r osRoot) CreateTemp(dir string, perm fs.FileMode) (projectFile, string, error) {
	for {
		name := tempName(dir)
		f, err := r.Root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		// A cleaner removes only a leftover it can lock. One that removed
		// this file before it was locked left it unlinked: take another.
		if err := flock(f, unix.LOCK_EX); err != nil {
			f.Close()
			return nil, "", err
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, "", err
		}
		if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink == 0 {
			f.Close()
			continue
		}
		return f, name, nil
	}
}

func (r osRoot) Open(name string) (projectFile, error) {
	f, err := r.Root.Open(name)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// flock applies lock operation how to f, waiting for it unless how holds
// LOCK_NB.
func flock(f *os.File, how int) error {
	c, err := f.SyscallConn()
	if err != nil {
		return err
	}
	cerr := c.Control(func(fd uintptr) {
		for {
			if err = unix.Flock(int(fd), how); !errors.Is(err, unix.EINTR) {
				return
			}
		}
	})
	if cerr != nil {
		return cerr
	}
	return err
}

// applyRestore carries out a plan inside workdir through an os.Root, so no
// link in the tree can lead a write outside it. progress, if set, is
// called as files and links are written.
func applyRestore(ctx context.Context, workdir string, wrap func(*os.Root) projectFS, g cas.Getter, plan []manifest.Change, progress func(filesDone, filesTotal, bytesDone, bytesTotal int64)) error {
	osroot, err := os.OpenRoot(workdir)
	if err != nil {
		return err
	}
	defer osroot.Close()
	root := wrap(osroot)
	touched := map[string]bool{}

	// Removals first, deepest first: deleted entries and the old side of
	// type changes.
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
		err := root.Remove(filepath.FromSlash(c.Path))
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

	// Then creations, parents before children: directories, and every
	// file and link, in parallel, written to a new temporary file beside
	// its target, synced and renamed over it. No inode is changed in
	// place, so a hard link to a file outside the project keeps its bytes
	// and mode; files and directories are created with 0666, 0777 for
	// executables and directories, less the umask, as git creates them.
	var filesTotal, bytesTotal int64
	for _, c := range plan {
		if c.Status != manifest.Deleted && c.New.Kind != manifest.KindDir {
			filesTotal++
			if c.New.Kind == manifest.KindFile {
				bytesTotal += c.New.Size
			}
		}
	}
	var (
		mu                   sync.Mutex
		filesDone, bytesDone int64
	)
	report := func(files, bytes int64) {
		if progress == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		filesDone += files
		bytesDone += bytes
		progress(filesDone, filesTotal, bytesDone, bytesTotal)
	}
	report(0, 0)
	g2, gctx := errgroup.WithContext(ctx)
	g2.SetLimit(4 * runtime.GOMAXPROCS(0)) // fsyncs overlap
	var failed error
	for _, c := range plan {
		if c.Status == manifest.Deleted {
			continue
		}
		p := filepath.FromSlash(c.Path)
		touched[path.Dir(c.Path)] = true
		if c.New.Kind == manifest.KindDir {
			if err := root.Mkdir(p, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
				failed = fmt.Errorf("restore: create directory %s: %w", c.Path, err)
				break
			}
			continue
		}
		g2.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err // another write failed: replace no more
			}
			var err error
			if c.New.Kind == manifest.KindSymlink {
				err = replaceLink(root, p, c.New.Target)
			} else {
				err = replaceFile(gctx, root, p, g, c.New)
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
	err = g2.Wait()
	if failed != nil {
		err = failed
	}
	for d := range touched {
		if serr := syncDir(root, d); serr != nil && err == nil {
			err = fmt.Errorf("restore: sync directory %s: %w; the files are in place but may not survive a power loss: check the disk", d, serr)
		}
	}
	return err
}

// syncDir makes the renames and removals in directory d durable. A
// directory a restore removed needs none.
func syncDir(root projectFS, d string) error {
	f, err := root.Open(filepath.FromSlash(d))
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

// removeLeftovers deletes the temporary files (paths relative to workdir)
// that killed restores left, never following a link; one a live restore
// holds locked is left alone. They are never captured, so nothing is
// lost; failures are harmless.
func removeLeftovers(workdir string, leftovers []string) {
	if len(leftovers) == 0 {
		return
	}
	root, err := os.OpenRoot(workdir)
	if err != nil {
		return
	}
	defer root.Close()
	for _, p := range leftovers {
		removeLeftover(root, filepath.FromSlash(p))
	}
}

// removeLeftover removes the regular file at p if no process holds it
// locked.
func removeLeftover(root *os.Root, p string) {
	st, err := root.Lstat(p)
	if err != nil || !st.Mode().IsRegular() {
		return
	}
	f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if fst, err := f.Stat(); err != nil || !os.SameFile(st, fst) {
		return // replaced meanwhile, or a link
	}
	if flock(f, unix.LOCK_EX|unix.LOCK_NB) != nil {
		return // a live restore is writing it
	}
	_ = root.Remove(p)
}

// tempName is a fresh hidden name in directory dir, matching
// manifest.TempPattern.
func tempName(dir string) string {
	return filepath.Join(dir, manifest.TempName())
}

// replaceLink replaces p with a new symbolic link to target.
func replaceLink(root projectFS, p, target string) error {
	tmp := tempName(filepath.Dir(p))
	if err := root.Symlink(target, tmp); err != nil {
		return err
	}
	if err := root.Rename(tmp, p); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	return nil
}

// replaceFile writes e's content to a new temporary file beside p, syncs
// it and renames it over p, holding it locked until then: a crash leaves
// p old or new, and a killed restore's temporary file is recognisably
// nobody's.
func replaceFile(ctx context.Context, root projectFS, p string, g cas.Getter, e manifest.Entry) error {
	perm := fs.FileMode(0o666)
	if e.Exec {
		perm = 0o777
	}
	f, tmp, err := root.CreateTemp(filepath.Dir(p), perm)
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
		return root.Rename(tmp, p)
	}()
	if err != nil {
		_ = root.Remove(tmp)
	}
	if cerr := f.Close(); err == nil { // releases the lock
		err = cerr
	}
	return err
}
