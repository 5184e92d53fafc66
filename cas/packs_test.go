package cas

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"sync"
)

// memPacks is a PackStore in memory for this package's tests (cas/packstore
// and cas/packtest import cas, so these tests cannot use them; the local
// store's files are tested there). fail, when set, is asked before every
// create, write, close and sync, and its error fails the call, as a
// failing disk would.
type memPacks struct {
	mu         sync.Mutex
	packs      map[string][]byte
	incomplete map[*memWriter]bool
	fail       func(op, name string) error // of creates and syncs
	failOpen   func(name string) error     // of opens
	// open counts the readers opened and not closed, peak the most at once.
	open, peak int
}

var _ PackStore = (*memPacks)(nil)

func newMemPacks() *memPacks {
	return &memPacks{packs: map[string][]byte{}, incomplete: map[*memWriter]bool{}}
}

func (m *memPacks) check(ctx context.Context, op, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, ok := PackName(name); name != "" && !ok {
		return fmt.Errorf("%s %q: not a pack name", op, name)
	}
	if m.fail != nil && (op == "create" || op == "sync") {
		return m.fail(op, name)
	}
	return nil
}

func notExist(op, name string) error { return &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist} }

func (m *memPacks) Create(ctx context.Context, name string) (PackWriter, error) {
	if err := m.check(ctx, "create", name); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.packs[name]; ok {
		return nil, &fs.PathError{Op: "create", Path: name, Err: fs.ErrExist}
	}
	w := &memWriter{m: m, name: name}
	m.incomplete[w] = true
	return w, nil
}

func (m *memPacks) Sync(ctx context.Context) error { return m.check(ctx, "sync", "") }

func (m *memPacks) Open(ctx context.Context, name string) (PackReader, error) {
	if err := m.check(ctx, "open", name); err != nil {
		return nil, err
	}
	if m.failOpen != nil {
		if err := m.failOpen(name); err != nil {
			return nil, err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.packs[name]
	if !ok {
		return nil, notExist("open", name)
	}
	m.open++
	m.peak = max(m.peak, m.open)
	return &memReader{Reader: bytes.NewReader(b), m: m}, nil
}

func (m *memPacks) Stat(ctx context.Context, name string) (StoredPack, error) {
	if err := m.check(ctx, "stat", name); err != nil {
		return StoredPack{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.packs[name]
	if !ok {
		return StoredPack{}, notExist("stat", name)
	}
	return StoredPack{Name: name, Size: int64(len(b))}, nil
}

func (m *memPacks) List(ctx context.Context, fn func(StoredPack) error) error {
	if err := m.check(ctx, "list", ""); err != nil {
		return err
	}
	m.mu.Lock()
	var packs []StoredPack
	for name, b := range m.packs {
		packs = append(packs, StoredPack{Name: name, Size: int64(len(b))})
	}
	m.mu.Unlock()
	sort.Slice(packs, func(i, j int) bool { return packs[i].Name < packs[j].Name })
	for _, p := range packs {
		if err := fn(p); err != nil {
			return err
		}
	}
	return nil
}

func (m *memPacks) Remove(ctx context.Context, name string) error {
	if err := m.check(ctx, "remove", name); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.packs[name]; !ok {
		return notExist("remove", name)
	}
	delete(m.packs, name)
	return nil
}

// SetAside drops the pack: these tests keep nothing aside.
func (m *memPacks) SetAside(ctx context.Context, name string) error {
	return m.Remove(ctx, name)
}

func (m *memPacks) RemoveIncomplete(ctx context.Context) (int64, error) {
	if err := m.check(ctx, "removeincomplete", ""); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var freed int64
	for w := range m.incomplete {
		freed += int64(w.buf.Len())
		delete(m.incomplete, w)
	}
	return freed, nil
}

// set replaces the bytes of pack name (damaging it, in tests).
func (m *memPacks) set(name string, b []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.packs[name] = b
}

// bytes returns a copy of the bytes of pack name.
func (m *memPacks) bytes(name string) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return bytes.Clone(m.packs[name])
}

// names lists the stored packs and how many writers are unfinished.
func (m *memPacks) names() ([]string, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var names []string
	for name := range m.packs {
		names = append(names, name)
	}
	sort.Strings(names)
	return names, len(m.incomplete)
}

type memWriter struct {
	m     *memPacks
	name  string
	buf   bytes.Buffer
	ended bool
}

func (w *memWriter) Write(b []byte) (int, error) {
	if w.ended {
		return 0, errors.New("write after end")
	}
	if w.m.fail != nil {
		if err := w.m.fail("write", w.name); err != nil {
			return 0, err
		}
	}
	return w.buf.Write(b)
}

func (w *memWriter) Close() error {
	if w.ended {
		return errors.New("close after end")
	}
	w.Abort()
	if w.m.fail != nil {
		if err := w.m.fail("close", w.name); err != nil {
			return err
		}
	}
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	if _, ok := w.m.packs[w.name]; ok {
		return &fs.PathError{Op: "close", Path: w.name, Err: fs.ErrExist}
	}
	w.m.packs[w.name] = w.buf.Bytes()
	return nil
}

func (w *memWriter) Abort() error {
	w.ended = true
	w.m.mu.Lock()
	delete(w.m.incomplete, w)
	w.m.mu.Unlock()
	return nil
}

type memReader struct {
	*bytes.Reader
	m      *memPacks
	closed bool
}

func (r *memReader) Close() error {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	if r.closed {
		return errors.New("close after close")
	}
	r.closed = true
	r.m.open--
	return nil
}
