package gc

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/manifest"
)

// Graph counts, for every object reachable from the roots it was built
// from, how many live referrers it has: roots, and live trees naming it;
// and for every base of a reachable delta (an object a store keeps only
// as the dictionary of a newer version, see package cas), how many
// reachable deltas it has. A base is live while one is, though no root
// reaches it; what it names as a tree is not.
type Graph struct {
	refs     map[cas.ID]int32
	children map[cas.ID][]cas.ID // each tree's distinct children
	base     func(cas.ID) (cas.ID, bool)
	bases    map[cas.ID]cas.ID // each reachable delta's base
	baseRefs map[cas.ID]int32
}

// Mark builds the graph of the objects reachable from roots. A root listed
// twice (two snapshots of one tree) counts twice. objects and trees, when
// known, are about how many objects and trees the graph will hold (the
// store's): its tables are made that large at once. base, when not nil,
// names the base of each object stored as a delta.
func Mark(ctx context.Context, g cas.Getter, roots []cas.ID, objects, trees int, base func(cas.ID) (cas.ID, bool)) (*Graph, error) {
	gr := &Graph{refs: make(map[cas.ID]int32, objects), children: make(map[cas.ID][]cas.ID, trees),
		base: base, bases: map[cas.ID]cas.ID{}, baseRefs: map[cas.ID]int32{}}
	for _, r := range roots {
		if err := gr.add(ctx, g, r); err != nil {
			return nil, err
		}
	}
	return gr, nil
}

// ref counts one more reference to object id and reports whether it is
// the first; on the first, a delta counts one more for its base.
func (gr *Graph) ref(id cas.ID) bool {
	gr.refs[id]++
	if gr.refs[id] > 1 {
		return false
	}
	if gr.base != nil {
		if b, ok := gr.base(id); ok {
			gr.bases[id] = b
			gr.baseRefs[b]++
		}
	}
	return true
}

// add counts one more reference to tree id, reading it on first sight.
func (gr *Graph) add(ctx context.Context, g cas.Getter, id cas.ID) error {
	if !gr.ref(id) {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	t, err := manifest.Load(ctx, g, id)
	if err != nil {
		return fmt.Errorf("mark: %w", err)
	}
	kids, chunks := distinctChildren(t)
	for _, c := range kids[:chunks] {
		gr.ref(c)
	}
	for _, d := range kids[chunks:] {
		if err := gr.add(ctx, g, d); err != nil {
			return err
		}
	}
	gr.children[id] = kids
	return nil
}

// distinctChildren returns the distinct chunks and subtrees that t names,
// in one slice, the first chunks of them chunks and the rest trees, each
// part sorted and without repeats: a sort costs less than a set for the
// few entries most trees have.
func distinctChildren(t manifest.Tree) (kids []cas.ID, chunks int) {
	n, d := 0, 0
	for _, e := range t.Entries {
		n += len(e.Chunks)
		if e.Kind == manifest.KindDir {
			d++
		}
	}
	kids = make([]cas.ID, 0, n+d)
	for _, e := range t.Entries {
		kids = append(kids, e.Chunks...)
	}
	for _, e := range t.Entries {
		if e.Kind == manifest.KindDir {
			kids = append(kids, e.Tree)
		}
	}
	cmp := func(a, b cas.ID) int { return bytes.Compare(a[:], b[:]) }
	slices.SortFunc(kids[:n], cmp)
	slices.SortFunc(kids[n:], cmp)
	chunks = len(slices.Compact(kids[:n]))
	dirs := slices.Compact(kids[n:])
	// The trees move down next to the distinct chunks.
	return append(kids[:chunks], dirs...), chunks
}

// Live reports whether id is reachable from a root not yet released, or
// the base of a delta that is.
func (gr *Graph) Live(id cas.ID) bool { return gr.refs[id] > 0 || gr.baseRefs[id] > 0 }

// EachLive calls fn with every live object, stopping at its first error.
func (gr *Graph) EachLive(fn func(cas.ID) error) error {
	for id, c := range gr.refs {
		if c > 0 {
			if err := fn(id); err != nil {
				return err
			}
		}
	}
	for id, c := range gr.baseRefs {
		if c > 0 && gr.refs[id] <= 0 {
			if err := fn(id); err != nil {
				return err
			}
		}
	}
	return nil
}

// Objects is the number of live objects.
func (gr *Graph) Objects() int {
	n := 0
	_ = gr.EachLive(func(cas.ID) error { n++; return nil })
	return n
}

// Release drops one reference to root (a dropped snapshot) and returns the
// total size, by size, of the objects that no live root reaches any more.
func (gr *Graph) Release(root cas.ID, size func(cas.ID) int64) int64 {
	var freed int64
	stack := []cas.ID{root}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if gr.refs[id] <= 0 {
			continue
		}
		gr.refs[id]--
		if gr.refs[id] > 0 {
			continue
		}
		if b, ok := gr.bases[id]; ok {
			if gr.baseRefs[b]--; gr.baseRefs[b] == 0 && gr.refs[b] <= 0 {
				freed += size(b)
			}
		}
		if gr.baseRefs[id] <= 0 {
			freed += size(id)
		}
		stack = append(stack, gr.children[id]...)
	}
	return freed
}

// Alone returns, changing nothing, the total size, by size, of the
// objects that only root reaches: what Release(root) would free. A root
// listed twice reaches nothing alone.
func (gr *Graph) Alone(root cas.ID, size func(cas.ID) int64) int64 {
	var freed int64
	gone := map[cas.ID]int32{}     // references the simulated release dropped
	goneBase := map[cas.ID]int32{} // and references as a base
	stack := []cas.ID{root}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if gr.refs[id]-gone[id] <= 0 {
			continue
		}
		gone[id]++
		if gr.refs[id]-gone[id] > 0 {
			continue
		}
		if b, ok := gr.bases[id]; ok {
			if goneBase[b]++; gr.baseRefs[b]-goneBase[b] == 0 && gr.refs[b]-gone[b] <= 0 {
				freed += size(b)
			}
		}
		if gr.baseRefs[id]-goneBase[id] <= 0 {
			freed += size(id)
		}
		stack = append(stack, gr.children[id]...)
	}
	return freed
}
