package cas

import (
	"fmt"
	"maps"
	"slices"
	"sync"
)

// memIndex is an object index held in maps, for the tests of this package
// (the real one is package index's, on a database transaction).
type memIndex struct {
	mu      sync.Mutex
	objects map[ID]Location
	packs   map[uint32]PackInfo
	inline  map[uint32][]byte
	next    uint32
}

var _ IndexWriter = (*memIndex)(nil)

func newMemIndex() *memIndex {
	return &memIndex{objects: map[ID]Location{}, packs: map[uint32]PackInfo{}, inline: map[uint32][]byte{}}
}

// within runs fn with the index, as a transaction would.
func within(ix *memIndex, fn func(*memIndex) error) error { return fn(ix) }

func (m *memIndex) Locate(id ID) (Location, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.objects[id]
	if !ok {
		return Location{}, fmt.Errorf("%s: %w", id.Short(), ErrNotFound)
	}
	return l, nil
}

func (m *memIndex) Pack(n uint32) (PackInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.packs[n]
	if !ok {
		return PackInfo{}, fmt.Errorf("%w: pack %d is not in the index", ErrCorrupt, n)
	}
	return p, nil
}

func (m *memIndex) Packs() ([]PackInfo, error) {
	var out []PackInfo
	for _, n := range slices.Sorted(maps.Keys(m.packs)) {
		out = append(out, m.packs[n])
	}
	return out, nil
}

func (m *memIndex) ForEachObject(fn func(Location) error) error {
	ids := slices.SortedFunc(maps.Keys(m.objects), func(a, b ID) int { return slices.Compare(a[:], b[:]) })
	for _, id := range ids {
		if err := fn(m.objects[id]); err != nil {
			return err
		}
	}
	return nil
}

func (m *memIndex) AddPack(name [16]byte, size int64) (PackInfo, error) {
	m.next++
	p := PackInfo{Number: m.next, Name: name, Size: size}
	m.packs[p.Number] = p
	return p, nil
}

func (m *memIndex) PutObject(l Location, replace bool) error {
	if _, ok := m.objects[l.ID]; ok && !replace {
		return nil
	}
	m.objects[l.ID] = l
	return nil
}

func (m *memIndex) DeleteObject(id ID) error { delete(m.objects, id); return nil }

func (m *memIndex) DeletePack(n uint32) error {
	delete(m.packs, n)
	delete(m.inline, n)
	return nil
}

func (m *memIndex) InlinePack(n uint32) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.inline[n]
	if !ok {
		return nil, fmt.Errorf("%w: inline pack %d is not in the index", ErrCorrupt, n)
	}
	return slices.Clone(b), nil
}

func (m *memIndex) AddInlinePack(name [16]byte, data []byte) (PackInfo, error) {
	p, _ := m.AddPack(name, int64(len(data)))
	p.Inline = true
	m.packs[p.Number] = p
	m.inline[p.Number] = slices.Clone(data)
	return p, nil
}
