package scan

import (
	"context"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/internal/statcache"
	"github.com/casckpt/casckpt/manifest"
)

// buildTree stores the trees bottom-up, fills the result's counts and the
// stat cache records of the directories that changed, and sets each
// directory's tree, waiting for the files of each to be read (hashAll);
// without Options.KeepTree it then drops the directory's entries. cached
// is true when nothing in or below n changed and its tree is the one the
// stat cache names; the caller checks that it is stored when a new tree
// refers to it (only there, so that an unchanged tree costs no lookups).
func (s *scanner) buildTree(ctx context.Context, n *node, res *Result) (cached bool, err error) {
	d := n.dir
	fromCache, same, err := s.buildSubtrees(ctx, n, res)
	if err != nil {
		return false, err
	}
	if same {
		d.tree = d.dc.Tree // nothing in or below it changed
	} else {
		for _, id := range fromCache {
			if err := s.checkCachedTree(id); err != nil {
				return false, err
			}
		}
		if d.tree, err = s.storeTree(ctx, n, res); err != nil {
			return false, err
		}
	}
	if !s.opts.KeepTree {
		// Its nodes, allocated together by walkDir, are freed with
		// the last pointer to them: the hash queue keeps none.
		d.children, d.links, d.dc, d.cachedTree = nil, nil, nil, nil
	}
	if testHook != nil {
		testHook("built", d.rel)
	}
	return same, nil
}

// buildSubtrees builds the trees of n's subdirectories, waits for its
// files to be read, counts its files and links into res, and reports
// children no longer captured as excluded. fromCache lists the subtrees
// taken from the stat cache; same is true when n's record in the cache
// still holds: its files and links, and every subtree, are as it records.
func (s *scanner) buildSubtrees(ctx context.Context, n *node, res *Result) (fromCache []cas.ID, same bool, _ error) {
	d := n.dir
	same = d.sameFiles
	sub := 0 // position among the subdirectories
	for _, c := range d.children {
		// Only a directory's node is read before d's files are: a
		// hasher writes a file's (its kind included) until d.hashed.
		if c.dir == nil || c.kind != manifest.KindDir {
			continue
		}
		cached, err := s.buildTree(ctx, c, res)
		if err != nil {
			return nil, false, err
		}
		id := c.dir.tree
		if cached {
			fromCache = append(fromCache, id)
		}
		if !same || sub >= len(d.dc.Subtrees) || d.dc.Subtrees[sub] != id {
			same = false
		}
		sub++
	}
	if d.hashed != nil {
		select {
		case <-d.hashed:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
	for _, c := range d.children {
		switch c.kind {
		case 0:
			s.exclude(join(d.rel, c.name))
			same = false
		case manifest.KindUnreadable:
			s.unreadable(join(d.rel, c.name))
			same = false
		case manifest.KindDir:
		default:
			res.Files++
			res.Bytes += c.size
		}
	}
	return fromCache, same && sub == len(d.dc.Subtrees), nil
}

// storeTree stores n's tree, whose subdirectories' trees are built, and
// puts its stat cache record into res.
func (s *scanner) storeTree(ctx context.Context, n *node, res *Result) (cas.ID, error) {
	d := n.dir
	t := manifest.Tree{Entries: make([]manifest.Entry, 0, len(d.children))}
	rec := statcache.Dir{Stamps: make([]uint64, 0, len(d.children))}
	var names statcache.NamesHasher
	for _, c := range d.children {
		if c.kind == manifest.KindFile && c.cached {
			if err := s.reuseChunks(ctx, n, c, res); err != nil { // may leave it out
				return cas.ID{}, err
			}
		}
		e := manifest.Entry{Name: c.name, Kind: c.kind}
		switch c.kind {
		case 0:
			continue
		case manifest.KindDir:
			e.Tree = c.dir.tree
		case manifest.KindSymlink:
			e.Target, e.Size = d.links[c.name], c.size
		case manifest.KindFile:
			e.Exec, e.Size, e.Chunks, e.Lines, e.Binary = c.exec, c.size, c.chunks, c.lines, c.binary
		}
		t.Entries = append(t.Entries, e)
		names.Add(c.name, uint8(c.kind))
		switch c.kind {
		case manifest.KindDir:
			rec.Stamps = append(rec.Stamps, 0)
			rec.Subtrees = append(rec.Subtrees, e.Tree)
		case manifest.KindUnreadable:
			rec.Stamps = append(rec.Stamps, 0) // never vouched for: read again next time
		default:
			rec.Stamps = append(rec.Stamps, c.stamp)
		}
	}
	rec.Names = names.Sum()
	id, err := manifest.Put(ctx, s.put, t)
	if err != nil {
		return cas.ID{}, err
	}
	rec.Tree = id
	res.CachePut[d.rel] = rec
	return id, nil
}
