package casckpt

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/manifest"
)

// LogEntry is a snapshot in which a path changed, with how it changed from
// the next older snapshot (for the oldest snapshot: from an empty tree, so
// a path it holds was added).
type LogEntry struct {
	Snapshot
	// Number is the snapshot's place among the project's snapshots,
	// newest first from 1: @Number refers to it (see Ref).
	Number int
	Status Status
	// Old and New are the path's entries in the next older snapshot and in
	// this one: Old is unset (Kind 0) when the path was added, New when it
	// was deleted.
	Old, New Entry
	// Insertions and Deletions count the lines that changed, as Diff
	// counts them; for a directory, summed over the files below it that
	// changed. Binary files count 0.
	Insertions int64
	Deletions  int64
}

// FileLog returns the snapshots of the project in dir in which p (a file,
// link or directory, relative to dir or absolute inside it) changed,
// newest first. A path that no snapshot holds has an empty log.
//
// It compares tree IDs down the path: from one snapshot to the next it
// reads only the directories on the way that differ, each tree at most
// once, stopping at the first one that did not change; for a directory
// that changed, it reads only the subtrees of it that differ. It changes
// nothing.
func (s *Store) FileLog(ctx context.Context, dir, p string) ([]LogEntry, error) {
	workdir, err := knownWorkdir(dir)
	if err != nil {
		return nil, err
	}
	clean, err := relPathIn(dir, workdir, p)
	if err != nil {
		return nil, err
	}
	out := []LogEntry{}
	err = s.read(ctx, func(v view) error {
		snaps, err := v.Tx.Snapshots(s.machineWorkdir(workdir))
		if err != nil {
			return err
		}
		out, err = fileLog(ctx, v.Objects, snaps, clean)
		return err
	})
	return out, err
}

// relPathIn cleans p, given relative to the project directory or as an
// absolute path inside it (dir as given, or workdir, where its links
// lead), into a slash-separated path relative to it ("" for the project
// itself).
func relPathIn(dir, workdir, p string) (string, error) {
	if !filepath.IsAbs(p) {
		return relPath(p)
	}
	bases := []string{workdir}
	if abs, err := filepath.Abs(dir); err == nil {
		bases = append(bases, abs)
	}
	for _, base := range bases {
		rel, err := filepath.Rel(base, p)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return relPath(rel)
		}
	}
	return "", fmt.Errorf("%w: path %q is outside the project directory %s", ErrRefused, p, workdir)
}

// fileLog is FileLog over snaps (newest first), reading objects from g.
func fileLog(ctx context.Context, g cas.Getter, snaps []record, p string) ([]LogEntry, error) {
	r := newPathResolver(ctx, g, p)
	at := make([]manifest.Entry, len(snaps)+1) // at[len(snaps)]: before the oldest, absent
	for i, sn := range snaps {
		e, err := r.resolve(sn.Root)
		if err != nil {
			return nil, damaged(sn, err)
		}
		at[i] = e
	}
	out := []LogEntry{}
	for i, sn := range snaps {
		status, changed := pathStatus(at[i+1], at[i])
		if !changed {
			continue
		}
		ins, del, err := lineCounts(ctx, g, p, status, at[i+1], at[i])
		if err != nil {
			return nil, damaged(sn, err)
		}
		out = append(out, LogEntry{Snapshot: hostSnapshot(sn), Number: i + 1, Status: status, Old: at[i+1], New: at[i], Insertions: ins, Deletions: del})
	}
	return out, nil
}

// pathStatus says how a path went from entry old to entry new (an unset
// entry: absent), and whether it changed at all: not when either was not
// captured (unreadable).
func pathStatus(old, new manifest.Entry) (manifest.Status, bool) {
	switch {
	case old.Kind == 0 && new.Kind == 0,
		old.Kind == manifest.KindUnreadable || new.Kind == manifest.KindUnreadable: // not captured: not known
		return "", false
	case old.Kind == 0:
		return manifest.Added, true
	case new.Kind == 0:
		return manifest.Deleted, true
	case old.Kind != new.Kind:
		return manifest.TypeChanged, true
	case !old.SameContent(new):
		return manifest.Modified, true
	}
	return "", false
}

// lineCounts counts the lines inserted and deleted at p, going from entry
// old to entry new with status: the file or link itself, and every file
// below it that changed where either is a directory.
func lineCounts(ctx context.Context, g cas.Getter, p string, status manifest.Status, old, new manifest.Entry) (ins, del int64, err error) {
	var changes []manifest.Change
	oldLeaf := old.Kind != 0 && old.Kind != manifest.KindDir
	newLeaf := new.Kind != 0 && new.Kind != manifest.KindDir
	switch {
	case oldLeaf && newLeaf:
		changes = append(changes, manifest.Change{Path: p, Status: status, Old: old, New: new})
	case oldLeaf:
		changes = append(changes, manifest.Change{Path: p, Status: manifest.Deleted, Old: old})
	case newLeaf:
		changes = append(changes, manifest.Change{Path: p, Status: manifest.Added, New: new})
	}
	oldTree, newTree := manifest.EmptyTreeID, manifest.EmptyTreeID
	if old.Kind == manifest.KindDir {
		oldTree = old.Tree
	}
	if new.Kind == manifest.KindDir {
		newTree = new.Tree
	}
	below, err := manifest.Diff(ctx, g, oldTree, newTree)
	if err != nil {
		return 0, 0, err
	}
	for _, c := range below {
		c.Path = path.Join(p, c.Path)
		changes = append(changes, c)
	}
	files, err := fileDiffs(ctx, changes, storeContent{g}, storeContent{g}, DiffOptions{})
	if err != nil {
		return 0, 0, err
	}
	_, ins, del = totals(files)
	return ins, del, nil
}

// pathResolver finds the entry at one path in tree after tree. It keeps
// every tree it reads, and the directories on the way to the path in the
// last tree it resolved: a tree that meets one of those directories on the
// way holds the same entry, found without reading further.
type pathResolver struct {
	ctx   context.Context
	g     cas.Getter
	names []string // the path's components; none for the project itself
	trees map[cas.ID]manifest.Tree
	// way[k] is the directory at depth k on the way to the path in the
	// last tree resolved (way[0] its root), as far as the way goes; entry
	// is what was found there (unset: absent).
	way   []cas.ID
	entry manifest.Entry
}

func newPathResolver(ctx context.Context, g cas.Getter, p string) *pathResolver {
	r := &pathResolver{ctx: ctx, g: g, trees: map[cas.ID]manifest.Tree{}}
	if p != "" {
		r.names = strings.Split(p, "/")
	}
	return r
}

// resolve returns the entry at the path in the tree whose root is root,
// unset when it holds none.
func (r *pathResolver) resolve(root cas.ID) (manifest.Entry, error) {
	way := make([]cas.ID, 0, len(r.names)+1)
	id := root
	for k := 0; ; k++ {
		if k < len(r.way) && r.way[k] == id {
			// The same directory as in the last tree: the rest of the way,
			// and the entry, are the same.
			r.way = append(way, r.way[k:]...)
			return r.entry, nil
		}
		way = append(way, id)
		if k == len(r.names) { // only for the project itself
			r.way, r.entry = way, manifest.Entry{Kind: manifest.KindDir, Tree: id}
			return r.entry, nil
		}
		t, err := r.load(id)
		if err != nil {
			return manifest.Entry{}, err
		}
		e, ok := t.Lookup(r.names[k])
		if !ok || (k < len(r.names)-1 && e.Kind != manifest.KindDir && e.Kind != manifest.KindUnreadable) {
			e = manifest.Entry{}
		}
		if e.Kind == 0 || e.Kind == manifest.KindUnreadable || k == len(r.names)-1 { // below an unreadable directory: unreadable too
			r.way, r.entry = way, e
			return e, nil
		}
		id = e.Tree
	}
}

// load reads tree id once.
func (r *pathResolver) load(id cas.ID) (manifest.Tree, error) {
	if t, ok := r.trees[id]; ok {
		return t, nil
	}
	t, err := manifest.Load(r.ctx, r.g, id)
	if err == nil {
		r.trees[id] = t
	}
	return t, err
}
