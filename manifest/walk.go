package manifest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/casckpt/casckpt/cas"
)

// MaxEntries bounds the entries (files, links and directories, counted at
// every path they appear at) that Walk and Diff visit in one call. A tree
// stored from disk holds at most max-files files (50,000 by default) and
// rarely as many directories, so ten times that default is room for any
// real project; only a tree that shares one subtree at very many paths (a
// "git bomb": 30 nested trees of two entries each name 2^30 paths) reaches
// it, and then the call fails with ErrTooLarge instead of growing without
// bound.
const MaxEntries = 10 * 50_000

// Walk calls fn for every entry below tree root, depth first, parents before
// their children and siblings in name order, passing over KindUnreadable
// entries (not captured). Paths are slash-separated and
// relative to the root. If fn returns fs.SkipDir for a directory, its
// contents are skipped; any other error stops the walk and is returned.
//
// The tree is sized first, each distinct subtree read once: a tree of more
// than MaxEntries entries fails with ErrTooLarge before fn is called.
func Walk(ctx context.Context, g cas.Getter, root cas.ID, fn func(p string, e Entry) error) error {
	sz := newSizer(ctx, g)
	n, err := sz.count(root)
	if err != nil {
		return err
	}
	if n > MaxEntries {
		return fmt.Errorf("tree %s: %w", root.Short(), ErrTooLarge)
	}
	err = walk(sz.trees, root, "", fn)
	if errors.Is(err, fs.SkipAll) {
		return nil
	}
	return err
}

// walk visits tree id, whose subtrees are all in trees.
func walk(trees map[cas.ID]Tree, id cas.ID, dir string, fn func(string, Entry) error) error {
	for _, e := range trees[id].Entries {
		if e.Kind == KindUnreadable {
			continue // not captured: nothing to show
		}
		p := path.Join(dir, e.Name)
		err := fn(p, e)
		if e.Kind == KindDir {
			if errors.Is(err, fs.SkipDir) {
				continue
			}
			if err == nil {
				err = walk(trees, e.Tree, p, fn)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// sizer counts the entries below trees, reading each distinct tree once
// and keeping it.
type sizer struct {
	ctx     context.Context
	g       cas.Getter
	trees   map[cas.ID]Tree
	earlier map[cas.ID]Tree // trees read before, by another sizer (VersionFinder)
	counts  map[cas.ID]int64
	onPath  map[cas.ID]bool
}

func newSizer(ctx context.Context, g cas.Getter) *sizer {
	return &sizer{ctx: ctx, g: g, trees: map[cas.ID]Tree{}, counts: map[cas.ID]int64{}, onPath: map[cas.ID]bool{}}
}

// count returns the number of entries below tree id, or MaxEntries+1 when
// there are more.
func (s *sizer) count(id cas.ID) (int64, error) {
	if n, ok := s.counts[id]; ok {
		return n, nil
	}
	if s.onPath[id] { // cannot happen with sound hashes; guards the recursion
		return 0, fmt.Errorf("tree %s: %w: it contains itself", id.Short(), cas.ErrCorrupt)
	}
	t, err := s.load(id)
	if err != nil {
		return 0, err
	}
	s.onPath[id] = true
	defer delete(s.onPath, id)
	n := int64(len(t.Entries))
	for _, e := range t.Entries {
		if n > MaxEntries {
			break
		}
		if e.Kind == KindDir {
			sub, err := s.count(e.Tree)
			if err != nil {
				return 0, err
			}
			n += sub
		}
	}
	n = min(n, MaxEntries+1)
	s.counts[id] = n
	return n, nil
}

// load reads tree id, once: it is kept for later calls.
func (s *sizer) load(id cas.ID) (Tree, error) {
	if t, ok := s.trees[id]; ok {
		return t, nil
	}
	if t, ok := s.earlier[id]; ok {
		s.trees[id] = t
		return t, nil
	}
	if err := s.ctx.Err(); err != nil {
		return Tree{}, err
	}
	t, err := Load(s.ctx, s.g, id)
	if err == nil {
		s.trees[id] = t
	}
	return t, err
}

// Lookup returns the entry at slash-separated path p below root. The empty
// path and "." name the root directory itself. A KindUnreadable entry (not
// captured) is ErrNotExist, as is every path below it.
func Lookup(ctx context.Context, g cas.Getter, root cas.ID, p string) (Entry, error) {
	e := Entry{Kind: KindDir, Tree: root}
	p = strings.Trim(path.Clean("/"+p), "/")
	if p == "" {
		return e, nil
	}
	for _, name := range strings.Split(p, "/") {
		if e.Kind != KindDir {
			return Entry{}, fmt.Errorf("%s: %w", p, ErrNotExist)
		}
		t, err := Load(ctx, g, e.Tree)
		if err != nil {
			return Entry{}, err
		}
		var ok bool
		if e, ok = t.Lookup(name); !ok || e.Kind == KindUnreadable {
			return Entry{}, fmt.Errorf("%s: %w", p, ErrNotExist)
		}
	}
	return e, nil
}
