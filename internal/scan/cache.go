package scan

import (
	"context"
	"slices"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/manifest"
)

// matchAll attaches to directory n and to each directory below it its
// stat cache record, and decides which of their files the cache vouches
// for (matchCache).
func (s *scanner) matchAll(n *node) {
	d := n.dir
	if dc, ok := s.opts.Cache[d.rel]; ok {
		d.dc = &dc
		s.cacheHits++
	}
	s.matchCache(n)
	for _, c := range d.children {
		if c.kind == manifest.KindDir {
			s.matchAll(c)
		}
	}
}

// cacheRemove lists, sorted, the directories of the stat cache that are
// no longer in the tree below top.
func (s *scanner) cacheRemove(top *node) []string {
	if s.cacheHits == len(s.opts.Cache) {
		return nil // every record was matched to a directory
	}
	seen := map[string]bool{}
	var visit func(n *node)
	visit = func(n *node) {
		seen[n.dir.rel] = true
		for _, c := range n.dir.children {
			if c.kind == manifest.KindDir {
				visit(c)
			}
		}
	}
	visit(top)
	var gone []string
	for d := range s.opts.Cache {
		if !seen[d] {
			gone = append(gone, d)
		}
	}
	slices.Sort(gone)
	return gone
}

// matchCache decides which files of directory n the stat cache vouches for
// and queues the others for hashing. While the names hash matches, the
// record's stamps line up with the children by position; otherwise the
// cached tree is read for the names.
func (s *scanner) matchCache(n *node) {
	d := n.dir
	var stamps map[string]uint64 // by name, when the listing changed
	aligned := d.dc != nil && d.dc.Names == d.names && len(d.dc.Stamps) == len(d.children)
	if d.dc != nil && !aligned {
		if t, err := manifest.Load(s.ctx, s.opts.Trees, d.dc.Tree); err == nil && len(t.Entries) == len(d.dc.Stamps) {
			d.cachedTree = &t
			stamps = map[string]uint64{}
			for i, e := range t.Entries {
				if e.Kind == manifest.KindFile {
					stamps[e.Name] = d.dc.Stamps[i]
				}
			}
		}
	}
	d.sameFiles = aligned
	for i, c := range d.children {
		switch c.kind {
		case manifest.KindFile:
			if aligned {
				c.cached = d.dc.Stamps[i] == c.stamp
			} else if st, ok := stamps[c.name]; ok {
				c.cached = st == c.stamp
			}
			if !c.cached {
				d.sameFiles = false
				d.queued.Add(1)
				s.mu.Lock()
				s.toHash = append(s.toHash, queued{d: d, n: c})
				s.mu.Unlock()
			}
		case manifest.KindSymlink:
			if aligned && d.dc.Stamps[i] != c.stamp {
				d.sameFiles = false
			}
		}
	}
	if d.queued.Load() > 0 {
		d.hashed = make(chan struct{})
	}
}

// checkCachedTree makes sure a tree taken from the stat cache is stored
// before a new tree refers to it.
func (s *scanner) checkCachedTree(id cas.ID) error {
	stored, err := s.opts.Trees.Has(id)
	if err != nil {
		return err
	}
	if !stored {
		return errCacheDamaged
	}
	return nil
}

// reuseChunks fills file c, a child of n vouched for by the stat
// cache, with the chunks, lines and binary flag of its entry in the cached
// tree. Without such an entry of the same size it reads the file instead,
// correcting the counts in res; when the file could not be read after all,
// it is reported as excluded (or unreadable) and c.kind says so.
func (s *scanner) reuseChunks(ctx context.Context, n, c *node, res *Result) error {
	d := n.dir
	if d.cachedTree == nil {
		ct, err := manifest.Load(ctx, s.opts.Trees, d.dc.Tree)
		if err != nil {
			ct = manifest.Tree{} // vouched-for files are read instead
		}
		d.cachedTree = &ct
	}
	if old, ok := d.cachedTree.Lookup(c.name); ok && old.Kind == manifest.KindFile && old.Size == c.size {
		c.chunks, c.lines, c.binary = old.Chunks, old.Lines, old.Binary
		return nil
	}
	counted := c.size // by buildSubtrees
	if err := s.hashFile(ctx, hashJob{rel: join(d.rel, c.name), n: c}); err != nil {
		return err
	}
	switch c.kind {
	case 0:
		s.exclude(join(d.rel, c.name))
	case manifest.KindUnreadable:
		s.unreadable(join(d.rel, c.name))
	default:
		res.Bytes += c.size - counted
		return nil
	}
	res.Files--
	res.Bytes -= counted
	return nil
}
