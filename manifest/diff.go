package manifest

import (
	"context"
	"path"

	"github.com/casckpt/casckpt/cas"
)

// Status is what happened to a path between two trees.
type Status string

// The statuses, named as in the command-line contract.
const (
	Added       Status = "added"
	Modified    Status = "modified"
	Deleted     Status = "deleted"
	TypeChanged Status = "type-changed"
)

// Change is one path that differs between two trees. Old is set unless the
// path was added, New unless it was deleted.
type Change struct {
	Path   string
	Status Status
	Old    Entry
	New    Entry
}

// Diff lists the paths that differ from tree a to tree b, in path order,
// directories before their contents. A directory that was added or deleted
// is listed with every entry below it; a directory present in both is not
// listed itself, only what changed inside it. Subtrees with equal IDs are
// not read.
func Diff(ctx context.Context, g cas.Getter, a, b cas.ID) ([]Change, error) {
	var out []Change
	err := diffTrees(ctx, g, a, b, "", &out)
	return out, err
}

func diffTrees(ctx context.Context, g cas.Getter, a, b cas.ID, dir string, out *[]Change) error {
	if a == b {
		return nil
	}
	ta, err := Load(ctx, g, a)
	if err != nil {
		return err
	}
	tb, err := Load(ctx, g, b)
	if err != nil {
		return err
	}
	i, j := 0, 0
	for i < len(ta.Entries) || j < len(tb.Entries) {
		switch {
		case j == len(tb.Entries) || (i < len(ta.Entries) && ta.Entries[i].Name < tb.Entries[j].Name):
			if err := addAll(ctx, g, ta.Entries[i], dir, Deleted, out); err != nil {
				return err
			}
			i++
		case i == len(ta.Entries) || tb.Entries[j].Name < ta.Entries[i].Name:
			if err := addAll(ctx, g, tb.Entries[j], dir, Added, out); err != nil {
				return err
			}
			j++
		default:
			ea, eb := ta.Entries[i], tb.Entries[j]
			p := path.Join(dir, ea.Name)
			switch {
			case ea.Kind == KindDir && eb.Kind == KindDir:
				if err := diffTrees(ctx, g, ea.Tree, eb.Tree, p, out); err != nil {
					return err
				}
			case ea.Kind != eb.Kind:
				*out = append(*out, Change{Path: p, Status: TypeChanged, Old: ea, New: eb})
				if err := addChildren(ctx, g, ea, p, Deleted, out); err != nil {
					return err
				}
				if err := addChildren(ctx, g, eb, p, Added, out); err != nil {
					return err
				}
			case !ea.SameContent(eb):
				*out = append(*out, Change{Path: p, Status: Modified, Old: ea, New: eb})
			}
			i++
			j++
		}
	}
	return nil
}

// addAll lists e and, for a directory, everything below it.
func addAll(ctx context.Context, g cas.Getter, e Entry, dir string, s Status, out *[]Change) error {
	p := path.Join(dir, e.Name)
	c := Change{Path: p, Status: s}
	if s == Deleted {
		c.Old = e
	} else {
		c.New = e
	}
	*out = append(*out, c)
	return addChildren(ctx, g, e, p, s, out)
}

func addChildren(ctx context.Context, g cas.Getter, e Entry, p string, s Status, out *[]Change) error {
	if e.Kind != KindDir {
		return nil
	}
	return Walk(ctx, g, e.Tree, func(sub string, child Entry) error {
		c := Change{Path: path.Join(p, sub), Status: s}
		if s == Deleted {
			c.Old = child
		} else {
			c.New = child
		}
		*out = append(*out, c)
		return nil
	})
}
