package undo

import (
	"context"
	"path"
	"slices"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/internal/restorer"
	"github.com/casckpt/casckpt/manifest"
)

// Input is what NewPlan compares.
type Input struct {
	// Start and End are the roots of the turn's start and end snapshots
	// (S and E), Work that of the working tree as scanned (W).
	Start, End, Work cas.ID
	// Excluded are the scan's excluded paths (slash-separated, relative to
	// the working tree's root, outermost only): present but not in W.
	// Nothing at or below them is touched.
	Excluded []string
	// ReadWork returns the bytes of the working tree's file at a slash
	// path relative to its root, following no link. NewPlan calls it only
	// for files it merges, one at a time; an error wrapping
	// fs.ErrNotExist makes the path a conflict, any other error fails
	// NewPlan.
	ReadWork func(p string) ([]byte, error)
}

// Conflict is a path the turn changed that the undo leaves alone.
type Conflict struct {
	Path   string
	Reason string // one line, lower case
}

// Plan is what an undo does. Its slices are never nil and list paths in
// manifest.Diff order.
type Plan struct {
	// Reverted are the paths put back in S's state (or already in it),
	// Merged the paths given the clean merge of W's changes and the
	// revert of the turn's, Conflicts the paths left alone.
	Reverted, Merged []string
	Conflicts        []Conflict
	// Restore are the writes and deletions that carry the plan out, for
	// restorer.Verify and restorer.Apply, both reading from Content.
	Restore restorer.Plan
	merged  *memory // the merged files' chunks
}

// Content returns the Getter that serves every chunk Restore writes:
// merged content from memory, everything else from store (the store the
// plan was made from, or a later view of it). It is safe for concurrent
// use.
func (p Plan) Content(store cas.Getter) cas.Getter {
	return layer{p.merged, store}
}

// action is what an undo does at one path.
type action uint8

const (
	undecided  action = iota
	revert            // write S's state over W's
	already           // W holds S's state: nothing to write
	merge             // write the merged file over W's
	conflict          // leave W's state alone
	pendingDir        // a directory to delete or replace once its contents are decided
)

// node is one path the turn changed, with its state in the three trees
// (Kind 0 where a tree lacks it) and what the undo does there.
type node struct {
	path    string
	s, e, w manifest.Entry
	act     action
	reason  string
	merged  manifest.Entry // the merged file, for merge
}

// planner is one NewPlan.
type planner struct {
	g      cas.Getter
	in     Input
	nodes  []*node
	byPath map[string]*node
	work   map[string]manifest.Change // Diff(E, W) by path
	merged *memory
}

// NewPlan plans the undo of the turn from in.Start to in.End in the
// working tree in.Work, reading trees and chunks from g (which must serve
// all three trees: W's are usually held in memory over the store). It
// reads S's, E's and W's bytes of the files it merges and writes nothing.
// A tree or chunk missing or damaged in g fails it (wrapping
// cas.ErrNotFound or cas.ErrCorrupt).
func NewPlan(ctx context.Context, g cas.Getter, in Input) (Plan, error) {
	turn, err := manifest.Diff(ctx, g, in.Start, in.End)
	if err != nil {
		return Plan{}, err
	}
	since, err := manifest.Diff(ctx, g, in.End, in.Work)
	if err != nil {
		return Plan{}, err
	}
	p := &planner{g: g, in: in, byPath: map[string]*node{}, work: map[string]manifest.Change{},
		merged: &memory{objects: map[cas.ID][]byte{}}}
	for _, c := range since {
		p.work[c.Path] = c
	}
	for _, c := range turn {
		n := &node{path: c.Path, s: c.Old, e: c.New, w: p.workEntry(c.Path, c.New)}
		p.nodes = append(p.nodes, n)
		p.byPath[n.path] = n
	}
	excluded := map[string]bool{}
	for _, e := range in.Excluded {
		excluded[e] = true
	}
	for _, n := range p.nodes {
		if err := p.decide(ctx, n, excluded); err != nil {
			return Plan{}, err
		}
	}
	p.settleDirs()
	return p.plan(), nil
}

// workEntry is W's entry at path p, given E's there (Kind 0: absent).
func (p *planner) workEntry(path string, e manifest.Entry) manifest.Entry {
	c, ok := p.work[path]
	switch {
	case !ok:
		return e
	case c.Status == manifest.Deleted:
		return manifest.Entry{}
	}
	return c.New
}

// decide settles n from its three states, its parent's fate (decided
// before it) and, for a merge, the three files' bytes. A directory to be
// deleted or replaced waits for settleDirs.
func (p *planner) decide(ctx context.Context, n *node, excluded map[string]bool) error {
	switch {
	case atOrUnder(n.path, excluded):
		n.fail("excluded from snapshots now (ignored, too large or unreadable)")
	case sameState(n.w, n.s):
		n.act = already
	case n.s.Kind != 0 && !p.finalDir(path.Dir(n.path)):
		parent := path.Dir(n.path)
		if q := p.byPath[parent]; q != nil && q.act == conflict {
			n.fail("in " + parent + ", which is left alone")
		} else {
			n.fail("its directory " + parent + " is gone")
		}
	case sameState(n.w, n.e) && n.w.Kind == manifest.KindDir && n.s.Kind != manifest.KindDir:
		n.act = pendingDir
	case sameState(n.w, n.e):
		n.act = revert
	case isText(n.s) && isText(n.e) && isText(n.w):
		return p.merge(ctx, n)
	default:
		n.fail(changedReason(n))
	}
	return nil
}

// finalDir reports whether d will be a directory once the plan is
// carried out.
func (p *planner) finalDir(d string) bool {
	if d == "." {
		return true
	}
	if n := p.byPath[d]; n != nil {
		if n.act == revert || n.act == already {
			return n.s.Kind == manifest.KindDir
		}
		return n.w.Kind == manifest.KindDir
	}
	// Not changed by the turn: a directory in S and E, and in W unless
	// it changed since.
	c, ok := p.work[d]
	return !ok || (c.Status != manifest.Deleted && c.New.Kind == manifest.KindDir)
}

// settleDirs decides, deepest first, the directories W holds where S
// holds none: each is deleted (or replaced by S's file or link) when
// nothing in it stays, and left alone as a conflict otherwise.
func (p *planner) settleDirs() {
	stays := map[string]bool{} // directories something stays in
	markParents := func(q string) {
		for d := path.Dir(q); d != "." && !stays[d]; d = path.Dir(d) {
			stays[d] = true
		}
	}
	for _, e := range p.in.Excluded {
		markParents(e)
	}
	for q, c := range p.work {
		if p.byPath[q] == nil && c.Status != manifest.Deleted {
			markParents(q) // made since the turn
		}
	}
	for _, n := range slices.Backward(p.nodes) {
		if n.act == pendingDir {
			n.act = revert
			if stays[n.path] {
				n.fail("holds entries the turn did not leave there (added or changed since, or excluded)")
			}
		}
		if n.w.Kind != 0 && !(n.act == revert && n.s.Kind == 0) {
			markParents(n.path)
		}
	}
}

// plan sums the decisions up.
func (p *planner) plan() Plan {
	out := Plan{Reverted: []string{}, Merged: []string{}, Conflicts: []Conflict{}, merged: p.merged}
	var changes []manifest.Change
	for _, n := range p.nodes {
		if c, ok := n.change(); ok {
			changes = append(changes, c)
		}
	}
	out.Restore = restorer.NewPlan(changes, nil, p.in.Excluded, func(string) bool { return false })
	for _, s := range out.Restore.Skipped { // not expected: excluded paths are conflicts already
		p.byPath[s].fail("an excluded entry is in the way")
	}
	for _, n := range p.nodes {
		switch n.act {
		case revert, already:
			out.Reverted = append(out.Reverted, n.path)
		case merge:
			out.Merged = append(out.Merged, n.path)
		default:
			out.Conflicts = append(out.Conflicts, Conflict{Path: n.path, Reason: n.reason})
		}
	}
	return out
}

// Without returns the plan less the changes at the paths left (those
// restorer.Apply left alone): each such path the turn changed is a
// conflict with reason why instead.
func (p Plan) Without(left []string, why string) Plan {
	if len(left) == 0 {
		return p
	}
	drop := make(map[string]bool, len(left))
	for _, l := range left {
		drop[l] = true
	}
	keep := func(paths []string) []string {
		return slices.DeleteFunc(slices.Clone(paths), func(q string) bool { return drop[q] })
	}
	out := Plan{Reverted: keep(p.Reverted), Merged: keep(p.Merged), Conflicts: slices.Clone(p.Conflicts),
		Restore: p.Restore.Without(left), merged: p.merged}
	for _, q := range append(slices.Clone(p.Reverted), p.Merged...) {
		if drop[q] {
			out.Conflicts = append(out.Conflicts, Conflict{Path: q, Reason: why})
		}
	}
	return out
}

// change is the write or deletion that carries out n's revert or merge,
// if any.
func (n *node) change() (manifest.Change, bool) {
	from, to := n.w, n.s
	switch n.act {
	case merge:
		to = n.merged
	case revert:
	default:
		return manifest.Change{}, false
	}
	c := manifest.Change{Path: n.path, Old: from, New: to}
	switch {
	case from.Kind == 0 && to.Kind == 0:
		return c, false
	case from.Kind == 0:
		c.Status = manifest.Added
	case to.Kind == 0:
		c.Status = manifest.Deleted
	case from.Kind != to.Kind:
		c.Status = manifest.TypeChanged
	case to.Kind == manifest.KindDir || sameState(from, to):
		return c, false
	default:
		c.Status = manifest.Modified
	}
	return c, true
}

// fail makes n a conflict.
func (n *node) fail(reason string) {
	n.act, n.reason = conflict, reason
}

// changedReason says why a path the turn changed, and that changed since,
// cannot be merged.
func changedReason(n *node) string {
	switch {
	case n.w.Kind == 0:
		return "deleted since the turn"
	case n.e.Kind == 0:
		return "created again since the turn deleted it"
	case n.w.Kind != n.e.Kind:
		return "now a " + kindName(n.w.Kind) + "; the turn left a " + kindName(n.e.Kind)
	case n.s.Kind == 0:
		return "changed since the turn created it"
	case n.s.Kind != n.e.Kind:
		return "changed since the turn made it a " + kindName(n.e.Kind)
	case n.w.Kind == manifest.KindSymlink:
		return "symbolic link changed since the turn"
	case n.w.Binary || n.e.Binary || n.s.Binary:
		return "binary file changed since the turn"
	}
	return "changed since the turn"
}

// kindName names a kind for people.
func kindName(k manifest.Kind) string {
	if k == manifest.KindSymlink {
		return "symbolic link"
	}
	if k == manifest.KindDir {
		return "directory"
	}
	return k.String()
}

// sameState reports whether two trees hold the same state at a path:
// both nothing, the same file bytes and executable bit, the same link
// target, or both a directory.
func sameState(a, b manifest.Entry) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case manifest.KindFile:
		return a.Exec == b.Exec && slices.Equal(a.Chunks, b.Chunks)
	case manifest.KindSymlink:
		return a.Target == b.Target
	}
	return true
}

// isText reports whether e is a file that is not binary.
func isText(e manifest.Entry) bool {
	return e.Kind == manifest.KindFile && !e.Binary
}

// atOrUnder reports whether p or a directory above it is in set.
func atOrUnder(p string, set map[string]bool) bool {
	for ; p != "."; p = path.Dir(p) {
		if set[p] {
			return true
		}
	}
	return false
}
