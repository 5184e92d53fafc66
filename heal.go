package casckpt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/manifest"
)

// healingExisting is what a pending snapshot's Writer deduplicates
// against: the store's objects, less those that heal found damaged or
// missing, which a Put then stores afresh.
type healingExisting struct {
	cas.Existing
	mu      sync.Mutex
	damaged map[cas.ID]bool
}

// Has reports whether id is stored intact, as far as is known.
func (h *healingExisting) Has(id cas.ID) (bool, error) {
	h.mu.Lock()
	bad := h.damaged[id]
	h.mu.Unlock()
	if bad {
		return false, nil
	}
	return h.Existing.Has(id)
}

// heal makes sure that what changes will overwrite or delete in workdir
// is stored intact before the tree is changed: the pre-change snapshot p
// refers to objects already stored (deduplicated) for the files and
// directories the scan found unchanged, and where one of those is damaged
// or missing, the working tree holds the only intact copy of its bytes.
// For each path changes overwrite or delete (only those), it reads and
// hash-checks the stored chunks of its entry in the tree scanned as root
// and the stored trees of the directories above it, and stores afresh,
// through p's Writer, each one found damaged: a file's chunks from the
// file (which must still hold the scanned bytes), a tree from overlay,
// where the scan built it. A healed pending snapshot is then recorded
// even where its tree equals the newest snapshot's, so that its commit
// points the index at the fresh copies (and publishes them); so is one of
// a bucket store whose scan stored objects of those paths that the store
// lacked (a lost pack's, which a sync left out). An error means nothing
// was healed and the caller changes nothing.
func (ss *hold) heal(ctx context.Context, v view, p *pendingSnapshot, overlay *treeOverlay, root cas.ID, changes []manifest.Change) error {
	files, chunks, trees, err := sharedObjects(ctx, overlay, root, changes)
	if err != nil {
		return err
	}
	bad := map[cas.ID]error{}
	fresh := false // the scan stored one of them: the store lacked it
	for _, id := range slices.Concat(chunks, trees) {
		has, err := p.stored.Existing.Has(id)
		if err != nil {
			return err
		}
		if !has {
			fresh = true
			continue
		}
		if _, err := v.Objects.Get(ctx, id); errors.Is(err, cas.ErrCorrupt) || errors.Is(err, cas.ErrNotFound) {
			bad[id] = err
		} else if err != nil {
			return err
		}
	}
	if len(bad) > 0 {
		p.stored.mu.Lock()
		for id := range bad {
			p.stored.damaged[id] = true
		}
		p.stored.mu.Unlock()
		if err := ss.restoreObjects(ctx, p, overlay, files, bad); err != nil {
			return err
		}
	} else if !fresh || p.rec != nil || !ss.s.repo.Backend().Features().Journaled {
		return nil
	} // else the scan of the newest snapshot's tree stored what a bucket lost, which only a record keeps (see touch)
	p.healed = true
	if p.rec == nil {
		return p.newRecord(ctx, v.Tx)
	}
	return nil
}

// restoreObjects stores afresh through p's Writer every object of bad:
// the trees from overlay, the chunks from the files that hold them. An
// object it cannot store again is an error.
func (ss *hold) restoreObjects(ctx context.Context, p *pendingSnapshot, overlay *treeOverlay, files map[string]manifest.Entry, bad map[cas.ID]error) error {
	left := maps.Clone(bad)
	for id, cause := range bad {
		data, ok := overlay.tree(id)
		if !ok {
			continue // a chunk
		}
		if _, err := p.w.Put(ctx, cas.KindTree, data); err != nil {
			return healFailed(p.workdir, "a directory", cause, err)
		}
		delete(left, id)
	}
	root, err := os.OpenRoot(p.workdir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, name := range slices.Sorted(maps.Keys(files)) {
		e := files[name]
		i := slices.IndexFunc(e.Chunks, func(id cas.ID) bool { return left[id] != nil })
		if i < 0 {
			continue
		}
		if err := putFileAgain(ctx, p, root, name, e); err != nil {
			return healFailed(p.workdir, name, left[e.Chunks[i]], err)
		}
		for _, id := range e.Chunks {
			delete(left, id)
		}
	}
	if len(left) > 0 {
		id := slices.MinFunc(slices.Collect(maps.Keys(left)), func(a, b cas.ID) int { return bytes.Compare(a[:], b[:]) })
		return healFailed(p.workdir, "object "+id.Short(), left[id], errors.New("the scan kept no copy of it"))
	}
	return nil
}

// putFileAgain stores file name of root through p's Writer as a snapshot
// does, and fails unless it still holds the bytes of its entry e.
func putFileAgain(ctx context.Context, p *pendingSnapshot, root *os.Root, name string, e manifest.Entry) error {
	f, err := root.Open(filepath.FromSlash(name))
	if err != nil {
		return err
	}
	defer f.Close()
	got, err := manifest.PutFile(ctx, p.w, e.Name, f, e.Size, e.Exec)
	if err != nil {
		return err
	}
	if !slices.Equal(got.Chunks, e.Chunks) {
		return errors.New("it changed since the scan")
	}
	return nil
}

// healFailed is the error of a heal that could not store what's stored
// copy is damaged (cause) again.
func healFailed(workdir, what string, cause, err error) error {
	return fmt.Errorf("%w: the stored copy of %s in %s is damaged (%v) and storing it again failed: %w; nothing was changed", ErrRefused, what, workdir, cause, err)
}

// sharedObjects returns what changes will overwrite or delete in the tree
// scanned as root (read from overlay): the file entries by path, their
// chunks, and the trees of the directories that are deleted or hold a
// changed path.
func sharedObjects(ctx context.Context, overlay *treeOverlay, root cas.ID, changes []manifest.Change) (map[string]manifest.Entry, []cas.ID, []cas.ID, error) {
	files := map[string]manifest.Entry{}
	var chunks []cas.ID
	dirs := map[string]cas.ID{".": root}
	var lookup func(d string) (cas.ID, error)
	lookup = func(d string) (cas.ID, error) {
		if id, ok := dirs[d]; ok {
			return id, nil
		}
		parent, err := lookup(path.Dir(d))
		if err != nil {
			return cas.ID{}, err
		}
		t, err := manifest.Load(ctx, overlay, parent)
		if err != nil {
			return cas.ID{}, err
		}
		e, ok := t.Lookup(path.Base(d))
		if !ok || e.Kind != manifest.KindDir {
			return cas.ID{}, fmt.Errorf("heal: %s is no directory of the scanned tree", d)
		}
		dirs[d] = e.Tree
		return e.Tree, nil
	}
	for _, c := range changes {
		switch c.Old.Kind {
		case manifest.KindFile:
			files[c.Path] = c.Old
			chunks = append(chunks, c.Old.Chunks...)
		case manifest.KindDir:
			dirs[c.Path] = c.Old.Tree
		}
		if c.Old.Kind == 0 {
			continue // nothing there to overwrite: nothing to keep
		}
		if _, err := lookup(path.Dir(c.Path)); err != nil {
			return nil, nil, nil, err
		}
	}
	trees := make([]cas.ID, 0, len(dirs))
	for _, id := range dirs {
		trees = append(trees, id)
	}
	return files, chunks, trees, nil
}
