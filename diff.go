package casckpt

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/internal/jsondiff"
	"github.com/casckpt/casckpt/internal/scan"
	"github.com/casckpt/casckpt/internal/textdiff"
	"github.com/casckpt/casckpt/manifest"
)

// FileDiff is one changed file or link between two trees.
type FileDiff struct {
	Path       string
	Status     manifest.Status
	Old, New   manifest.Entry // Old unset when added, New unset when deleted
	Binary     bool
	Insertions int64
	Deletions  int64
	// Patch is the git-style unified diff of the file (with DiffOptions.Patch).
	Patch string
	// JSON lists, with DiffOptions.JSON, what changed value by value in a
	// modified file whose two versions are JSON documents (an object or
	// an array in UTF-8, at most JSONMaxSize bytes): the deepest JSONPaths
	// that differ, objects by key, arrays by position, in a fixed order
	// (depth first, keys sorted). Empty when no value changed (white
	// space, key order or escapes did); nil when either version is no JSON
	// document (then only the line diff tells the change).
	JSON []JSONChange
}

// JSONChange is one value that differs between two versions of a JSON
// document: its Path ("$.steps[6]", `$["a b"]`), its Op ("added",
// "removed" or "changed") and its From and To values as written, without
// white space (From nil when added, To when removed). Numbers compare as
// written (1.0 and 1 differ), so none loses precision.
type JSONChange = jsondiff.Change

// JSONMaxSize is the largest version of a file DiffOptions.JSON compares
// value by value (16 MiB).
const JSONMaxSize = jsondiff.MaxSize

// DiffResult is the change from one snapshot to another or to the
// working tree.
type DiffResult struct {
	From         cas.ID
	To           cas.ID // zero: the working tree
	Files        []FileDiff
	FilesChanged int64
	Insertions   int64
	Deletions    int64
}

// DiffOptions tune Diff.
type DiffOptions struct {
	// To is the snapshot to compare with; empty compares with the working
	// tree (with the exclusions of Snapshot).
	To Ref
	// Patch fills FileDiff.Patch.
	Patch bool
	// MaxFileSize and MaxFiles are the exclusion limits of the working tree
	// scan, as in SnapshotOptions; MaxFileSize defaults to the one snapshot
	// from was taken with, whose SnapshotOptions.Exclude and MaxDirFiles
	// apply too.
	MaxFileSize int64
	MaxFiles    int
	// JSON fills FileDiff.JSON.
	JSON bool
}

// Diff compares snapshot from of the project in dir with another snapshot
// or with the working tree (on a bucket store with Options.ReadMachine, a
// snapshot of that machine's project at dir with the working tree here).
// It changes nothing.
func (s *Store) Diff(ctx context.Context, dir string, from Ref, opts DiffOptions) (DiffResult, error) {
	workdir, err := knownWorkdir(dir)
	if err != nil {
		return DiffResult{}, err
	}
	project := s.machineWorkdir(workdir) // another machine's with Options.ReadMachine
	var res DiffResult
	err = s.read(ctx, func(v view) error {
		snaps, err := v.Tx.Snapshots(project)
		if err != nil {
			return err
		}
		a, _, err := resolve(snaps, from, project)
		if err != nil {
			return err
		}
		res.From = a.ID
		if opts.MaxFileSize <= 0 {
			opts.MaxFileSize = a.MaxFileSize
		}
		var (
			toRoot cas.ID
			newer  contentSource
			getter cas.Getter = v.Objects
		)
		if opts.To != "" {
			b, _, err := resolve(snaps, opts.To, project)
			if err != nil {
				return err
			}
			res.To, toRoot = b.ID, b.Root
			newer = storeContent{v.Objects}
		} else {
			overlay := newTreeOverlay(v.Objects)
			scanned, err := scan.Scan(ctx, workdir, overlay, scan.Options{
				MaxFileSize: opts.MaxFileSize, MaxFiles: opts.MaxFiles, Exclude: a.Exclude, MaxDirFiles: a.MaxDirFiles,
				Cache: v.Tx.StatCache(workdir), Trees: v.Objects, Skip: s.skipDirs(),
			})
			if err != nil {
				return err
			}
			toRoot, getter = scanned.Root, overlay
			root, err := os.OpenRoot(workdir)
			if err != nil {
				return err
			}
			defer root.Close()
			newer = diskContent{root}
		}
		changes, err := manifest.Diff(ctx, getter, a.Root, toRoot)
		if err != nil {
			return damaged(a, err)
		}
		res.Files, err = fileDiffs(ctx, changes, storeContent{v.Objects}, newer, opts)
		if err != nil {
			return err
		}
		res.FilesChanged, res.Insertions, res.Deletions = totals(res.Files)
		return nil
	})
	return res, err
}

func totals(files []FileDiff) (changed, ins, del int64) {
	for _, f := range files {
		ins += f.Insertions
		del += f.Deletions
	}
	return int64(len(files)), ins, del
}

// contentSource reads the bytes of a file entry (or a link's target).
type contentSource interface {
	content(ctx context.Context, path string, e manifest.Entry) ([]byte, error)
}

type storeContent struct{ g cas.Getter }

func (c storeContent) content(ctx context.Context, _ string, e manifest.Entry) ([]byte, error) {
	if e.Kind == manifest.KindSymlink {
		return []byte(e.Target), nil
	}
	return manifest.ReadFile(ctx, c.g, e)
}

type diskContent struct{ root *os.Root }

func (c diskContent) content(_ context.Context, p string, e manifest.Entry) ([]byte, error) {
	if e.Kind == manifest.KindSymlink {
		return []byte(e.Target), nil
	}
	return c.root.ReadFile(filepath.FromSlash(p))
}

// fileDiffs turns tree changes into per-file line statistics and, with
// opts.Patch, git-style unified diffs (with opts.JSON, JSON changes too).
// Added and deleted files take their line counts from their entries; only
// modified files are read.
func fileDiffs(ctx context.Context, changes []manifest.Change, older, newer contentSource, opts DiffOptions) ([]FileDiff, error) {
	out := []FileDiff{}
	for _, c := range changes {
		if c.Status == manifest.TypeChanged {
			// Shown as git shows it: the old entry deleted, the new one added.
			if c.Old.Kind != manifest.KindDir {
				d, err := fileDiff(ctx, manifest.Change{Path: c.Path, Status: manifest.Deleted, Old: c.Old}, older, newer, opts)
				if err != nil {
					return nil, err
				}
				d.Status = manifest.TypeChanged
				out = append(out, d)
			}
			if c.New.Kind != manifest.KindDir {
				d, err := fileDiff(ctx, manifest.Change{Path: c.Path, Status: manifest.Added, New: c.New}, older, newer, opts)
				if err != nil {
					return nil, err
				}
				d.Status = manifest.TypeChanged
				if n := len(out); n > 0 && out[n-1].Path == c.Path {
					out[n-1].Insertions += d.Insertions
					out[n-1].Binary = out[n-1].Binary || d.Binary
					out[n-1].Patch += d.Patch
					out[n-1].New = c.New
					continue
				}
				out = append(out, d)
			}
			continue
		}
		if c.Old.Kind == manifest.KindDir || c.New.Kind == manifest.KindDir {
			continue
		}
		d, err := fileDiff(ctx, c, older, newer, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func entryLines(e manifest.Entry) (int64, bool) {
	if e.Kind == manifest.KindSymlink {
		return 1, false
	}
	return e.Lines, e.Binary
}

func gitMode(e manifest.Entry) string {
	switch {
	case e.Kind == manifest.KindSymlink:
		return "120000"
	case e.Exec:
		return "100755"
	}
	return "100644"
}

func fileDiff(ctx context.Context, c manifest.Change, older, newer contentSource, opts DiffOptions) (FileDiff, error) {
	d := FileDiff{Path: c.Path, Status: c.Status, Old: c.Old, New: c.New}
	patch := opts.Patch
	var header strings.Builder
	oldLabel, newLabel := QuotePath("a/"+c.Path), QuotePath("b/"+c.Path)
	if patch {
		fmt.Fprintf(&header, "diff --git %s %s\n", oldLabel, newLabel)
	}
	switch c.Status {
	case manifest.Added:
		lines, bin := entryLines(c.New)
		d.Insertions, d.Binary = lines, bin
		oldLabel = "/dev/null"
		fmt.Fprintf(&header, "new file mode %s\n", gitMode(c.New))
	case manifest.Deleted:
		lines, bin := entryLines(c.Old)
		d.Deletions, d.Binary = lines, bin
		newLabel = "/dev/null"
		fmt.Fprintf(&header, "deleted file mode %s\n", gitMode(c.Old))
	case manifest.Modified:
		_, ob := entryLines(c.Old)
		_, nb := entryLines(c.New)
		d.Binary = ob || nb
		if gitMode(c.Old) != gitMode(c.New) {
			fmt.Fprintf(&header, "old mode %s\nnew mode %s\n", gitMode(c.Old), gitMode(c.New))
		}
	}
	sameContent := c.Status == manifest.Modified && c.Old.SameBytes(c.New)
	if sameContent {
		if patch {
			d.Patch = header.String()
		}
		return d, nil
	}
	if d.Binary {
		if patch {
			fmt.Fprintf(&header, "Binary files %s and %s differ\n", oldLabel, newLabel)
			d.Patch = header.String()
		}
		return d, nil
	}
	if c.Status == manifest.Modified || patch {
		oldText, newText, err := bothContents(ctx, c, older, newer)
		if err != nil {
			return d, err
		}
		var r textdiff.Result
		if patch {
			r = textdiff.Unified(nameLabel(oldLabel, c.Path), nameLabel(newLabel, c.Path), oldText, newText)
		} else {
			r = textdiff.Count(oldText, newText)
		}
		d.Insertions, d.Deletions = r.Insertions, r.Deletions
		if patch {
			header.WriteString(r.Patch)
			d.Patch = header.String()
		}
		if opts.JSON && c.Status == manifest.Modified {
			d.JSON, _ = jsondiff.Diff(oldText, newText)
		}
	}
	return d, nil
}

// bothContents reads the old and the new bytes of change c (nil for the
// side that has none).
func bothContents(ctx context.Context, c manifest.Change, older, newer contentSource) (oldText, newText []byte, err error) {
	if c.Status != manifest.Added {
		if oldText, err = older.content(ctx, c.Path, c.Old); err != nil {
			return nil, nil, err
		}
	}
	if c.Status != manifest.Deleted {
		if newText, err = newer.content(ctx, c.Path, c.New); err != nil {
			return nil, nil, err
		}
	}
	return oldText, newText, nil
}

// QuotePath quotes a path as git does in a patch's headers and in diff
// --stat (with core.quotePath off): in double quotes with C escapes when
// it holds a control character, a quote or a backslash.
func QuotePath(p string) string { return textdiff.QuotePath(p) }

// nameLabel is the "---" or "+++" label of a patch of path: git follows a
// file's name with a tab when path holds a space (not "/dev/null").
func nameLabel(label, path string) string {
	if label != "/dev/null" && strings.Contains(path, " ") {
		return label + "\t"
	}
	return label
}

// treeOverlay is a Putter that keeps trees in memory and only hashes file
// content (or, through through, also passes everything on to a Putter that
// stores it), over a Getter for everything else: a working tree can then
// be compared with snapshots before its objects are committed, or without
// writing to the store at all.
type treeOverlay struct {
	base  cas.Getter
	next  cas.Putter // nil: nothing is stored
	mu    sync.Mutex
	trees map[cas.ID][]byte
}

// through makes the overlay store every object it is given through next,
// and returns it.
func (o *treeOverlay) through(next cas.Putter) cas.Putter {
	o.next = next
	return o
}

func newTreeOverlay(base cas.Getter) *treeOverlay {
	return &treeOverlay{base: base, trees: map[cas.ID][]byte{}}
}

func (o *treeOverlay) Put(ctx context.Context, kind cas.Kind, data []byte) (cas.ID, error) {
	var id cas.ID
	if o.next != nil {
		var err error
		if id, err = o.next.Put(ctx, kind, data); err != nil {
			return id, err
		}
	} else {
		id = cas.Sum(kind, data)
	}
	if kind == cas.KindTree {
		o.mu.Lock()
		o.trees[id] = append([]byte(nil), data...)
		o.mu.Unlock()
	}
	return id, nil
}

// tree returns the bytes of tree id if the overlay was given it.
func (o *treeOverlay) tree(id cas.ID) ([]byte, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	b, ok := o.trees[id]
	return b, ok
}

func (o *treeOverlay) Get(ctx context.Context, id cas.ID) ([]byte, error) {
	o.mu.Lock()
	b, ok := o.trees[id]
	o.mu.Unlock()
	if ok {
		return b, nil
	}
	return o.base.Get(ctx, id)
}
