package castest

import (
	"context"
	"fmt"
	"sync"

	"github.com/casckpt/casckpt/cas"
)

// Memory is an object store held in a map. It is safe for concurrent use.
type Memory struct {
	mu      sync.Mutex
	objects map[cas.ID][]byte
}

var (
	_ cas.Getter = (*Memory)(nil)
	_ cas.Putter = (*Memory)(nil)
)

// NewMemory returns an empty store.
func NewMemory() *Memory { return &Memory{objects: map[cas.ID][]byte{}} }

// Put stores a copy of data.
func (m *Memory) Put(_ context.Context, kind cas.Kind, data []byte) (cas.ID, error) {
	id := cas.Sum(kind, data)
	m.mu.Lock()
	m.objects[id] = append([]byte(nil), data...)
	m.mu.Unlock()
	return id, nil
}

// Get returns the object, or an error wrapping cas.ErrNotFound.
func (m *Memory) Get(_ context.Context, id cas.ID) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if b, ok := m.objects[id]; ok {
		return b, nil
	}
	return nil, fmt.Errorf("%s: %w", id.Short(), cas.ErrNotFound)
}

// Has reports whether the object is stored.
func (m *Memory) Has(id cas.ID) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.objects[id]
	return ok, nil
}

// Delete removes an object, to simulate a damaged store.
func (m *Memory) Delete(id cas.ID) {
	m.mu.Lock()
	delete(m.objects, id)
	m.mu.Unlock()
}

// Len is the number of objects stored.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.objects)
}
