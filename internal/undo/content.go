package undo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sync"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/internal/textdiff"
	"github.com/casckpt/casckpt/manifest"
)

// merge merges n's three text files (base E, ours W, theirs S) and keeps
// the result in memory, or makes n a conflict: lines both sides changed,
// or a working file that is no longer what the scan hashed.
func (p *planner) merge(ctx context.Context, n *node) error {
	base, err := manifest.ReadFile(ctx, p.g, n.e)
	if err != nil {
		return fmt.Errorf("undo %s: %w", n.path, err)
	}
	theirs, err := manifest.ReadFile(ctx, p.g, n.s)
	if err != nil {
		return fmt.Errorf("undo %s: %w", n.path, err)
	}
	ours, err := p.in.ReadWork(n.path)
	if errors.Is(err, fs.ErrNotExist) {
		n.fail("changed during the undo")
		return nil
	}
	if err != nil {
		return fmt.Errorf("undo %s: %w", n.path, err)
	}
	read, err := manifest.PutFile(ctx, sums{}, n.w.Name, bytes.NewReader(ours), int64(len(ours)), n.w.Exec)
	if err != nil {
		return fmt.Errorf("undo %s: %w", n.path, err)
	}
	if !slices.Equal(read.Chunks, n.w.Chunks) {
		n.fail("changed during the undo")
		return nil
	}
	merged, clean := textdiff.Merge(base, ours, theirs)
	if !clean {
		n.fail("changed since the turn on the same or adjacent lines")
		return nil
	}
	exec := n.w.Exec // the executable bit merged as the lines are
	if n.w.Exec == n.e.Exec {
		exec = n.s.Exec
	}
	e, err := manifest.PutFile(ctx, p.merged, path.Base(n.path), bytes.NewReader(merged), int64(len(merged)), exec)
	if err != nil {
		return fmt.Errorf("undo %s: %w", n.path, err)
	}
	n.act, n.merged = merge, e
	return nil
}

// sums is a cas.Putter that only hashes: it stores nothing.
type sums struct{}

// Put returns the ID data would be stored under.
func (sums) Put(_ context.Context, kind cas.Kind, data []byte) (cas.ID, error) {
	return cas.Sum(kind, data), nil
}

// memory holds merged content until the plan is applied. It is safe for
// concurrent use.
type memory struct {
	mu      sync.Mutex
	objects map[cas.ID][]byte
}

var _ cas.Putter = (*memory)(nil)

// Put keeps a copy of data.
func (m *memory) Put(_ context.Context, kind cas.Kind, data []byte) (cas.ID, error) {
	id := cas.Sum(kind, data)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.objects[id]; !ok {
		m.objects[id] = bytes.Clone(data)
	}
	return id, nil
}

// layer serves what memory holds, and everything else from base.
type layer struct {
	mem  *memory
	base cas.Getter
}

var _ cas.Getter = layer{}

// Get returns an object of mem, or base's.
func (l layer) Get(ctx context.Context, id cas.ID) ([]byte, error) {
	l.mem.mu.Lock()
	b, ok := l.mem.objects[id]
	l.mem.mu.Unlock()
	if ok {
		return b, nil
	}
	return l.base.Get(ctx, id)
}
