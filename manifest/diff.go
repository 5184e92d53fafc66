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
// not read, and every other tree is read once. A diff that visits more than
// MaxEntries entries fails with ErrTooLarge.
//
// A path that either tree holds as KindUnreadable is not a change, nor is
// anything below it: what it held is not known.
func Diff(ctx context.Context, g cas.Getter, a, b cas.ID) ([]Change, error) {
	d := &differ{sz: newSizer(ctx, g)}
	err := d.trees(a, b, "")
	if err != nil {
		return nil, err
	}
	return d.out, nil
}

// differ is one Diff: its trees read so far (in sz), the entries visited
// and the changes found.
type differ struct {
	sz      *sizer
	visited int64
	out     []Change
}

// visit counts n more entries visited.
func (d *differ) visit(n int64) error {
	if d.visited += n; d.visited > MaxEntries {
		return ErrTooLarge
	}
	return nil
}

// load reads trees a and b.
func (d *differ) load(a, b cas.ID) (ta, tb Tree, err error) {
	if ta, err = d.sz.load(a); err == nil {
		tb, err = d.sz.load(b)
	}
	return ta, tb, err
}

func (d *differ) trees(a, b cas.ID, dir string) error {
	if a == b {
		return nil
	}
	ta, tb, err := d.load(a, b)
	if err != nil {
		return err
	}
	i, j := 0, 0
	for i < len(ta.Entries) || j < len(tb.Entries) {
		if err := d.visit(1); err != nil {
			return err
		}
		switch {
		case j == len(tb.Entries) || (i < len(ta.Entries) && ta.Entries[i].Name < tb.Entries[j].Name):
			if err := d.addAll(ta.Entries[i], dir, Deleted); err != nil {
				return err
			}
			i++
		case i == len(ta.Entries) || tb.Entries[j].Name < ta.Entries[i].Name:
			if err := d.addAll(tb.Entries[j], dir, Added); err != nil {
				return err
			}
			j++
		default:
			ea, eb := ta.Entries[i], tb.Entries[j]
			p := path.Join(dir, ea.Name)
			switch {
			case ea.Kind == KindUnreadable || eb.Kind == KindUnreadable: // not known: no change
			case ea.Kind == KindDir && eb.Kind == KindDir:
				if err := d.trees(ea.Tree, eb.Tree, p); err != nil {
					return err
				}
			case ea.Kind != eb.Kind:
				d.out = append(d.out, Change{Path: p, Status: TypeChanged, Old: ea, New: eb})
				if err := d.addChildren(ea, p, Deleted); err != nil {
					return err
				}
				if err := d.addChildren(eb, p, Added); err != nil {
					return err
				}
			case !ea.SameContent(eb):
				d.out = append(d.out, Change{Path: p, Status: Modified, Old: ea, New: eb})
			}
			i++
			j++
		}
	}
	return nil
}

// addAll lists e and, for a directory, everything below it.
func (d *differ) addAll(e Entry, dir string, s Status) error {
	if e.Kind == KindUnreadable {
		return nil
	}
	p := path.Join(dir, e.Name)
	c := Change{Path: p, Status: s}
	if s == Deleted {
		c.Old = e
	} else {
		c.New = e
	}
	d.out = append(d.out, c)
	return d.addChildren(e, p, s)
}

// addChildren lists everything below directory e, sized first.
func (d *differ) addChildren(e Entry, p string, s Status) error {
	if e.Kind != KindDir {
		return nil
	}
	n, err := d.sz.count(e.Tree)
	if err != nil {
		return err
	}
	if err := d.visit(n); err != nil {
		return err
	}
	return walk(d.sz.trees, e.Tree, "", func(sub string, child Entry) error {
		c := Change{Path: path.Join(p, sub), Status: s}
		if s == Deleted {
			c.Old = child
		} else {
			c.New = child
		}
		d.out = append(d.out, c)
		return nil
	})
}
