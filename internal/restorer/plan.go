package restorer

import (
	"context"
	"strings"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/manifest"
)

// Plan is what a restore does: the changes to carry out and the paths it
// leaves alone. Apply reports its progress against Written and Bytes.
type Plan struct {
	// Changes are the paths to write or delete, in manifest.Diff order:
	// directories before their contents. Never nil.
	Changes []manifest.Change
	// Skipped are the paths left alone because an excluded entry (one a
	// scan did not capture) is in the way. Never nil.
	Skipped []string
	// Written counts the files and links to write, Deleted the files and
	// links to delete (directories are not counted), and Bytes the size of
	// the files to write.
	Written, Deleted int
	Bytes            int64
}

// NewPlan keeps the changes inside paths (all when paths is empty), with
// the directories needed above them. Exclusions protect only what the
// target lacks: a path the target holds is restored even where it is
// excluded now (a file that grew past the size limit, a path ignored
// since), unless an excluded entry of the other kind (a directory for a
// file or link, or the reverse; isDir tells which excluded paths are
// directories, and may be nil when excluded is empty) is there. Skipped are
// the changes an excluded entry is in the way of: a deletion at or under an
// excluded path, and anything at or under a directory to be replaced that
// holds excluded entries or an excluded entry of the other kind.
func NewPlan(changes []manifest.Change, paths, excluded []string, isDir func(p string) bool) Plan {
	stuck := stuckPaths(changes, excluded, isDir)
	blocked := func(c manifest.Change) bool {
		for _, s := range stuck {
			if under(c.Path, s) {
				return true
			}
		}
		if c.Status != manifest.Deleted {
			return false
		}
		for _, e := range excluded {
			if under(c.Path, e) {
				return true
			}
		}
		return false
	}
	p := Plan{Changes: []manifest.Change{}, Skipped: []string{}}
	for _, c := range changes {
		if !wanted(c, paths) {
			continue
		}
		if blocked(c) {
			p.Skipped = append(p.Skipped, c.Path)
			continue
		}
		p.add(c)
	}
	return p
}

// add appends c to the plan's changes and counts it.
func (p *Plan) add(c manifest.Change) {
	p.Changes = append(p.Changes, c)
	if c.Status == manifest.Deleted && c.Old.Kind != manifest.KindDir {
		p.Deleted++
	}
	if c.Status != manifest.Deleted && c.New.Kind != manifest.KindDir {
		p.Written++
		if c.New.Kind == manifest.KindFile {
			p.Bytes += c.New.Size
		}
	}
}

// Without returns the plan less the changes at the paths left (those
// Apply left alone), recounted.
func (p Plan) Without(left []string) Plan {
	if len(left) == 0 {
		return p
	}
	drop := make(map[string]bool, len(left))
	for _, l := range left {
		drop[l] = true
	}
	out := Plan{Changes: []manifest.Change{}, Skipped: p.Skipped}
	for _, c := range p.Changes {
		if !drop[c.Path] {
			out.add(c)
		}
	}
	return out
}

// PlanTree is the plan that writes tree root into an empty directory:
// every entry added, parents before children, siblings in name order. It
// reads (and so verifies) every tree below root, but no chunk.
func PlanTree(ctx context.Context, g cas.Getter, root cas.ID) (Plan, error) {
	changes, err := manifest.Diff(ctx, g, manifest.EmptyTreeID, root)
	if err != nil {
		return Plan{}, err
	}
	return NewPlan(changes, nil, nil, nil), nil
}

// stuckPaths are the paths of changes that cannot be made without touching
// an excluded entry: a directory to be replaced that holds excluded
// entries, and a path where an excluded entry of the other kind is.
func stuckPaths(changes []manifest.Change, excluded []string, isDir func(p string) bool) []string {
	isExcluded := make(map[string]bool, len(excluded))
	for _, e := range excluded {
		isExcluded[e] = true
	}
	var stuck []string
	for _, c := range changes {
		if c.Status == manifest.TypeChanged && c.Old.Kind == manifest.KindDir {
			for _, e := range excluded {
				if strings.HasPrefix(e, c.Path+"/") {
					stuck = append(stuck, c.Path)
					break
				}
			}
		}
		if c.Status != manifest.Deleted && isExcluded[c.Path] && isDir(c.Path) != (c.New.Kind == manifest.KindDir) {
			stuck = append(stuck, c.Path)
		}
	}
	return stuck
}

// wanted reports whether c is inside paths (all are when paths is empty)
// or is a directory that must exist (or replace a file) above one of them.
func wanted(c manifest.Change, paths []string) bool {
	if len(paths) == 0 {
		return true
	}
	for _, p := range paths {
		if under(c.Path, p) {
			return true
		}
		if strings.HasPrefix(p, c.Path+"/") && c.Status != manifest.Deleted && c.New.Kind == manifest.KindDir {
			return true
		}
	}
	return false
}

// under reports whether p is base or inside it.
func under(p, base string) bool {
	return p == base || strings.HasPrefix(p, base+"/")
}
