package gitimport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/manifest"
)

// sourceError is a failure to read the source repository (a missing or
// damaged object), as opposed to a failure of the casckpt store. Only the
// commit that met it is skipped.
type sourceError struct{ err error }

func (e *sourceError) Error() string { return e.err.Error() }
func (e *sourceError) Unwrap() error { return e.err }

func sourceErrorf(format string, args ...any) error {
	return &sourceError{fmt.Errorf(format, args...)}
}

// treeResult is a git tree converted to a manifest tree.
type treeResult struct {
	id           cas.ID
	empty        bool // holds nothing casckpt can store
	files, bytes int64
	gitlinks     int // submodule entries left out, at any depth
	badNames     int // entries left out because casckpt cannot hold them
	tooLarge     int // files left out because they exceed the size limit
}

// maxDepth bounds the nesting of trees: no file system path can be deeper
// (PATH_MAX is 4,096 bytes, and each level takes at least two). Deeper
// trees are refused rather than recursed into.
const maxDepth = 2048

// converter turns git trees into manifest trees, storing through put. It
// remembers what it converted, so each git tree and blob is read once per
// import; it must not outlive the Putter (the Store.Import call) it writes
// to, whose objects become permanent only if that import commits.
//
// Every object is checked against its hash as it is read. A commit of more
// than maxFiles files is refused (counted as its trees are converted, so a
// tree that names one subtree at very many paths is refused after a few
// reads); a file larger than maxFileSize is left out without being read.
type converter struct {
	st                    *objectReader
	put                   cas.Putter
	maxFiles, maxFileSize int64
	trees                 map[plumbing.Hash]treeResult
	blobs                 map[plumbing.Hash]manifest.Entry
	onPath                map[plumbing.Hash]bool // the trees being converted
}

func newConverter(st *objectReader, put cas.Putter, maxFiles, maxFileSize int64) *converter {
	return &converter{st: st, put: put, maxFiles: maxFiles, maxFileSize: maxFileSize, trees: map[plumbing.Hash]treeResult{},
		blobs: map[plumbing.Hash]manifest.Entry{}, onPath: map[plumbing.Hash]bool{}}
}

// root converts a commit's root tree. Unlike subdirectories, an empty root
// is kept (as the empty tree).
func (c *converter) root(ctx context.Context, h plumbing.Hash) (treeResult, error) {
	r, err := c.tree(ctx, h)
	if err == nil && r.empty {
		r.id, err = manifest.Put(ctx, c.put, manifest.Tree{})
	}
	return r, err
}

// tree converts git tree h: regular and executable files, symbolic links,
// and subdirectories that hold anything. Submodule entries, names casckpt
// cannot hold (see manifest.ValidName) and any .git entry are left out and
// counted.
func (c *converter) tree(ctx context.Context, h plumbing.Hash) (treeResult, error) {
	if r, ok := c.trees[h]; ok {
		return r, nil
	}
	gt, err := c.readTree(ctx, h)
	if err != nil {
		return treeResult{}, err
	}
	c.onPath[h] = true
	defer delete(c.onPath, h)
	var res treeResult
	t := manifest.Tree{Entries: make([]manifest.Entry, 0, len(gt.Entries))}
	for _, e := range gt.Entries {
		if err := c.entry(ctx, e, &t, &res); err != nil {
			return treeResult{}, err
		}
		if res.files > c.maxFiles {
			return treeResult{}, sourceErrorf("tree %s: more than %d files, more than a snapshot may hold", h, c.maxFiles)
		}
	}
	return c.storeTree(ctx, h, t, res)
}

// readTree reads and decodes git tree h, checked against its hash, unless
// it contains itself, is nested more than maxDepth deep, or ctx has ended.
func (c *converter) readTree(ctx context.Context, h plumbing.Hash) (*object.Tree, error) {
	if c.onPath[h] {
		return nil, sourceErrorf("tree %s contains itself", h)
	}
	if len(c.onPath) >= maxDepth {
		return nil, sourceErrorf("tree %s: directories nested more than %d deep", h, maxDepth)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	obj, err := c.st.read(plumbing.TreeObject, h, maxWholeObject)
	if err != nil {
		return nil, sourceErrorf("tree %s: %w", h, err)
	}
	gt, err := object.DecodeTree(c.st.st, obj)
	if err != nil {
		return nil, sourceErrorf("tree %s: %w", h, err)
	}
	return gt, nil
}

// entry converts one entry of a git tree, appending it to t and counting it
// in res, or counting in res why it is left out.
func (c *converter) entry(ctx context.Context, e object.TreeEntry, t *manifest.Tree, res *treeResult) error {
	if manifest.ValidName(e.Name) != nil || strings.EqualFold(e.Name, ".git") {
		res.badNames++
		return nil
	}
	// go-git canonicalises modes as git does (100664 is a regular file,
	// an unknown type a gitlink).
	switch e.Mode {
	case filemode.Dir:
		sub, err := c.tree(ctx, e.Hash)
		if err != nil {
			return err
		}
		res.gitlinks += sub.gitlinks
		res.badNames += sub.badNames
		res.tooLarge += sub.tooLarge
		if sub.empty {
			return nil // git has no empty directories
		}
		t.Entries = append(t.Entries, manifest.Entry{Name: e.Name, Kind: manifest.KindDir, Tree: sub.id})
		res.files += sub.files
		res.bytes += sub.bytes
	case filemode.Submodule:
		res.gitlinks++
	case filemode.Symlink:
		target, err := c.linkTarget(e.Hash)
		if err != nil {
			return err
		}
		if target == "" || len(target) > manifest.MaxTargetLen || strings.IndexByte(target, 0) >= 0 {
			res.badNames++
			return nil
		}
		t.Entries = append(t.Entries, manifest.Entry{Name: e.Name, Kind: manifest.KindSymlink, Target: target, Size: int64(len(target))})
		res.files++
		res.bytes += int64(len(target))
	case filemode.Regular, filemode.Deprecated, filemode.Executable:
		entry, ok, err := c.file(ctx, e.Hash, e.Mode == filemode.Executable)
		if err != nil {
			return err
		}
		if !ok {
			res.tooLarge++
			return nil
		}
		entry.Name = e.Name
		t.Entries = append(t.Entries, entry)
		res.files++
		res.bytes += entry.Size
	default:
		res.badNames++
	}
	return nil
}

// storeTree stores t, the conversion of git tree h, unless it is empty or
// names an entry twice, and remembers the result res for h.
func (c *converter) storeTree(ctx context.Context, h plumbing.Hash, t manifest.Tree, res treeResult) (treeResult, error) {
	if len(t.Entries) == 0 {
		res.empty = true
		c.trees[h] = res
		return res, nil
	}
	t.Sort()
	for i := 1; i < len(t.Entries); i++ {
		if t.Entries[i-1].Name == t.Entries[i].Name {
			return treeResult{}, sourceErrorf("tree %s: %q appears twice", h, t.Entries[i].Name)
		}
	}
	var err error
	if res.id, err = manifest.Put(ctx, c.put, t); err != nil {
		return treeResult{}, fmt.Errorf("tree %s: %w", h, err)
	}
	c.trees[h] = res
	return res, nil
}

// file stores a blob's bytes exactly as the commit holds them, streamed
// and checked against the blob's hash. A blob larger than the size limit is
// not read: ok is false.
func (c *converter) file(ctx context.Context, h plumbing.Hash, exec bool) (_ manifest.Entry, ok bool, _ error) {
	if e, ok := c.blobs[h]; ok {
		e.Exec = exec
		return e, true, nil
	}
	_, size, rc, err := c.st.open(plumbing.BlobObject, h, c.maxFileSize)
	switch {
	case errors.Is(err, errObjectTooLarge):
		return manifest.Entry{}, false, nil
	case err != nil:
		return manifest.Entry{}, false, sourceErrorf("blob %s: %w", h, err)
	}
	defer rc.Close()
	r := &errReader{r: rc}
	e, err := manifest.PutFile(ctx, c.put, "", r, size, exec)
	if err == nil {
		// PutFile stops at size bytes: read on to the end, where the
		// content is checked.
		_, err = r.Read(nil)
		if errors.Is(err, io.EOF) {
			err = nil
		}
	}
	switch {
	case r.err != nil:
		return manifest.Entry{}, false, sourceErrorf("blob %s: %w", h, r.err)
	case err != nil:
		return manifest.Entry{}, false, fmt.Errorf("blob %s: %w", h, err)
	}
	c.blobs[h] = e
	return e, true, nil
}

// linkTarget reads a symbolic link's target, checked against its hash; a
// target longer than manifest.MaxTargetLen, which casckpt cannot hold, is
// not read and returned empty.
func (c *converter) linkTarget(h plumbing.Hash) (string, error) {
	obj, err := c.st.read(plumbing.BlobObject, h, manifest.MaxTargetLen)
	if errors.Is(err, errObjectTooLarge) {
		return "", nil
	}
	if err != nil {
		return "", sourceErrorf("blob %s: %w", h, err)
	}
	rc, err := obj.Reader()
	if err != nil {
		return "", sourceErrorf("blob %s: %w", h, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc) // a memory object's reader
	if err != nil {
		return "", sourceErrorf("blob %s: %w", h, err)
	}
	return string(b), nil
}

// errReader remembers the first read error other than io.EOF, to tell a
// damaged source from a failing store.
type errReader struct {
	r   io.Reader
	err error
}

func (r *errReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && r.err == nil {
		r.err = err
	}
	return n, err
}
