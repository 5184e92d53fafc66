package casckpt

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
	// SnapshotOptions; paths they exclude are never touched. MaxFileSize
	// defaults to the limit the snapshot was taken with, so a file it left
	// out as too large is never deleted.
	MaxFileSize int64
	MaxFiles    int
}

// RestoreResult says what Restore did (or, in a dry run, would do).
type RestoreResult struct {
	RestoredTo   cas.ID
	PreRestoreID cas.ID // zero when no pre-restore snapshot was taken
	Written      int    // files and links written (or re-moded)
	Deleted      int    // files and links deleted
	DryRun       bool
	// Changes is the plan: every path written or deleted, in order.
	Changes []manifest.Change
	// Skipped names paths left alone because an excluded entry (ignored,
	// over the size limit, unreadable) is in the way.
	Skipped []string
}

// PreRestorePrefix starts the reason of every pre-restore snapshot.
const PreRestorePrefix = "pre-restore"

// Restore makes the project's working tree (or the given paths) equal to
// snapshot ref: every entry of the snapshot is written with its bytes,
// executable bit and link target, and every path a snapshot would capture
// that the snapshot lacks is deleted. Excluded paths are never touched and
// nothing is written outside the project directory, whatever links it
// holds. Files that already match are left as they are. It takes a
// pre-restore snapshot, reads and verifies every tree and chunk it needs
// before touching the tree, and replaces each file atomically.
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

	// The current tree: stored as the pre-restore snapshot, or in a dry run
	// only hashed, with its trees kept in memory.
	var current scan.Result
	var getter cas.Getter = ss.objects
	if opts.DryRun {
		overlay := newTreeOverlay(ss.objects)
		current, err = scan.Scan(ctx, workdir, overlay, scan.Options{
			MaxFileSize: opts.MaxFileSize, MaxFiles: opts.MaxFiles,
			Cache: index.LoadStatCache(ss.tx, workdir), Trees: ss.objects, Skip: s.skipDirs(),
		})
		if err != nil {
			return res, err
		}
		getter = overlay
	} else {
		ss.endView()
		var pre SnapshotResult
		pre, current, err = ss.snapshot(ctx, workdir, SnapshotOptions{
			Reason:      fmt.Sprintf("%s: before restoring %s", PreRestorePrefix, target.ID.Short()),
			Keep:        -1, // a restore never drops snapshots
			MaxFileSize: opts.MaxFileSize, MaxFiles: opts.MaxFiles,
		})
		if err != nil {
			return res, fmt.Errorf("pre-restore snapshot: %w", err)
		}
		if pre.Created {
			res.PreRestoreID = pre.ID
		}
		if err := ss.view(); err != nil {
			return res, err
		}
		getter = ss.objects
	}

	changes, err := manifest.Diff(ctx, getter, current.Root, target.Root)
	if err != nil {
		return res, ss.refuseDamaged(ctx, snaps, target, err)
	}
	res.Changes, res.Skipped = planRestore(changes, paths, current.Excluded)
	for _, c := range res.Changes {
		if c.Status == manifest.Deleted && c.Old.Kind != manifest.KindDir {
			res.Deleted++
		}
		if c.Status != manifest.Deleted && c.New.Kind != manifest.KindDir {
			res.Written++
		}
	}
	// Every chunk to be written is read and checked against its hash before
	// the tree is touched.
	var toWrite []cas.ID
	for _, c := range res.Changes {
		if c.Status != manifest.Deleted && c.New.Kind == manifest.KindFile && !sameData(c) {
			toWrite = append(toWrite, c.New.Chunks...)
		}
	}
	if err := ss.verifyChunks(ctx, toWrite); err != nil {
		return res, ss.refuseDamaged(ctx, snaps, target, err)
	}
	if opts.DryRun {
		return res, nil
	}
	if err := applyRestore(ctx, workdir, ss.s.projectFS, ss.objects, res.Changes); err != nil {
		return res, err
	}
	removeLeftovers(workdir, current.Leftovers)
	return res, nil
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
// the directories needed above them, and drops those an excluded entry is
// in the way of: at the path or above it, or inside a directory the
// snapshot has a file or link in place of (it cannot be removed without
// touching the excluded entry).
func planRestore(changes []manifest.Change, paths, excluded []string) (plan []manifest.Change, skipped []string) {
	var stuck []string // directories to be replaced that hold excluded entries
	for _, c := range changes {
		if c.Status == manifest.TypeChanged && c.Old.Kind == manifest.KindDir {
			for _, e := range excluded {
				if strings.HasPrefix(e, c.Path+"/") {
					stuck = append(stuck, c.Path)
					break
				}
			}
		}
	}
	blocked := func(p string) bool {
		for _, e := range append(excluded, stuck...) {
			if under(p, e) {
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
	plan = []manifest.Change{}
	for _, c := range changes {
		if !wanted(c) {
			continue
		}
		if blocked(c.Path) {
			skipped = append(skipped, c.Path)
			continue
		}
		plan = append(plan, c)
	}
	return plan, skipped
}

// sameData reports whether a modified file keeps its content (only its
// executable bit changes).
func sameData(c manifest.Change) bool {
	return c.Status == manifest.Modified && c.Old.Kind == manifest.KindFile &&
		c.New.Kind == manifest.KindFile && equalChunks(c.Old.Chunks, c.New.Chunks)
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
	OpenFile(name string, flag int, perm fs.FileMode) (projectFile, error)
	Open(name string) (projectFile, error)
	Remove(name string) error
	Mkdir(name string, perm fs.FileMode) error
	Symlink(oldname, newname string) error
	Chmod(name string, mode fs.FileMode) error
	Rename(oldname, newname string) error
}

// projectFile is what a restore does to an open file or directory.
type projectFile interface {
	io.Writer
	Chmod(mode fs.FileMode) error
	Sync() error
	Close() error
}

// osRoot is the real projectFS.
type osRoot struct{ *os.Root }

func rootFS(r *os.Root) projectFS { return osRoot{r} }

func (r osRoot) OpenFile(name string, flag int, perm fs.FileMode) (projectFile, error) {
	f, err := r.Root.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (r osRoot) Open(name string) (projectFile, error) {
	return r.OpenFile(name, os.O_RDONLY, 0)
}

// applyRestore carries out a plan inside workdir through an os.Root, so no
// link in the tree can lead a write outside it.
func applyRestore(ctx context.Context, workdir string, wrap func(*os.Root) projectFS, g cas.Getter, plan []manifest.Change) error {
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

	// Then creations, parents before children: directories, and every file
	// and link written to a temporary name beside its target, in parallel.
	type staged struct{ tmp, final string }
	var (
		mu     sync.Mutex
		stages []staged
	)
	stage := func(tmp, final string) {
		mu.Lock()
		stages = append(stages, staged{tmp, final})
		mu.Unlock()
	}
	g2, gctx := errgroup.WithContext(ctx)
	g2.SetLimit(4 * runtime.GOMAXPROCS(0)) // fsyncs overlap
	var failed error
	for _, c := range plan {
		if c.Status == manifest.Deleted {
			continue
		}
		p := filepath.FromSlash(c.Path)
		touched[path.Dir(c.Path)] = true
		switch {
		case c.New.Kind == manifest.KindDir:
			if err := root.Mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				failed = fmt.Errorf("restore: create directory %s: %w", c.Path, err)
			}
		case sameData(c):
			if err := root.Chmod(p, fs.FileMode(c.New.Mode())); err != nil {
				failed = fmt.Errorf("restore: chmod %s: %w", c.Path, err)
			}
		case c.New.Kind == manifest.KindSymlink:
			tmp := tempName(p)
			if err := root.Symlink(c.New.Target, tmp); err != nil {
				failed = fmt.Errorf("restore: link %s: %w", c.Path, err)
			} else {
				stage(tmp, p)
			}
		default:
			g2.Go(func() error {
				tmp, err := writeTemp(gctx, root, p, g, c.New)
				if err != nil {
					return fmt.Errorf("restore: write %s: %w", c.Path, err)
				}
				stage(tmp, p)
				return nil
			})
		}
		if failed != nil {
			break
		}
	}
	err = g2.Wait()
	if failed != nil {
		err = failed
	}
	for _, st := range stages {
		if err == nil {
			if err = root.Rename(st.tmp, st.final); err != nil {
				err = fmt.Errorf("restore: replace %s: %w", filepath.ToSlash(st.final), err)
			}
		}
		if err != nil {
			_ = root.Remove(st.tmp)
		}
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

// removeLeftovers deletes the temporary files an interrupted restore left
// (never captured, so nothing is lost); failures are harmless.
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
		_ = root.Remove(filepath.FromSlash(p))
	}
}

// tempName is a fresh hidden name beside p.
func tempName(p string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return filepath.Join(filepath.Dir(p), ".casckpt-"+hex.EncodeToString(b[:])+".tmp")
}

// writeTemp writes e's content to a fresh temporary file beside p, with
// e's mode, syncs it and returns its name: every file is durable before any
// is renamed into place, so a crash leaves each path old or new.
func writeTemp(ctx context.Context, root projectFS, p string, g cas.Getter, e manifest.Entry) (string, error) {
	tmp := tempName(p)
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
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
		if err := f.Chmod(fs.FileMode(e.Mode())); err != nil {
			return err
		}
		return f.Sync()
	}()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = root.Remove(tmp)
		return "", err
	}
	return tmp, nil
}
