package manifest

import (
	"context"

	"github.com/casckpt/casckpt/cas"
)

// A VersionFinder finds the versions (Versions) of pair after pair of
// trees, the snapshots of a project in order: a tree the pair before read
// (the earlier snapshot of this pair was the later one of that) is not
// read again. It keeps the trees of the last pair only.
type VersionFinder struct {
	ctx  context.Context
	g    cas.Getter
	last map[cas.ID]Tree
}

// NewVersionFinder returns a VersionFinder that reads trees through g.
func NewVersionFinder(ctx context.Context, g cas.Getter) *VersionFinder {
	return &VersionFinder{ctx: ctx, g: g}
}

// Versions notes in versions, for each object of tree b that took the
// place of another in tree a at the same path, that other one: b itself,
// its subtrees that changed, and the chunks of its files that changed,
// chunk by chunk when both versions have as many chunks. Subtrees with
// equal IDs are not read, and nothing is noted for a path added, deleted
// or of another kind. A walk that visits more than MaxEntries entries
// fails with ErrTooLarge. It names which objects a store may keep as
// deltas of which (cas.SweepOptions.Bases).
func (f *VersionFinder) Versions(a, b cas.ID, versions map[cas.ID]cas.ID) error {
	sz := newSizer(f.ctx, f.g)
	sz.earlier = f.last
	err := (&differ{sz: sz}).versions(a, b, versions)
	f.last = sz.trees
	return err
}

func (d *differ) versions(a, b cas.ID, versions map[cas.ID]cas.ID) error {
	if a == b {
		return nil
	}
	versions[b] = a
	ta, tb, err := d.load(a, b)
	if err != nil {
		return err
	}
	if err := d.visit(int64(len(tb.Entries))); err != nil {
		return err
	}
	for _, eb := range tb.Entries {
		ea, ok := ta.Lookup(eb.Name)
		switch {
		case !ok || ea.Kind != eb.Kind:
		case eb.Kind == KindDir:
			if err := d.versions(ea.Tree, eb.Tree, versions); err != nil {
				return err
			}
		case eb.Kind == KindFile && len(ea.Chunks) == len(eb.Chunks):
			for i, c := range eb.Chunks {
				if c != ea.Chunks[i] {
					versions[c] = ea.Chunks[i]
				}
			}
		}
	}
	return nil
}
