package packtest

import (
	"context"
	"sync"

	"github.com/casckpt/casckpt/cas"
)

// Op names one kind of call Faulty can fail.
type Op string

// The calls Faulty can fail: methods of the store, of its pack writers and
// of its pack readers.
const (
	AnyOp              Op = "" // in a Fault: every kind of call
	OpCreate           Op = "create"
	OpWrite            Op = "write"
	OpClose            Op = "close" // a pack writer's Close
	OpAbort            Op = "abort"
	OpSync             Op = "sync"
	OpOpen             Op = "open"
	OpReadAt           Op = "readat"
	OpStat             Op = "stat"
	OpList             Op = "list"
	OpRemove           Op = "remove"
	OpSetAside         Op = "setaside"
	OpRemoveIncomplete Op = "removeincomplete"
)

// Fault says which calls fail and how.
type Fault struct {
	Op  Op    // the kind of call that fails; AnyOp counts calls of every kind
	N   int   // the N-th call of that kind since Set fails (from 1); 0: every one
	Err error // what the failed call returns; nil means ErrInjected
}

// Faulty is a cas.PackStore that passes every call to the store it wraps
// but the ones its Fault picks, which fail with the Fault's error before
// they reach it. It is safe for concurrent use; calls are counted in the
// order they take its lock.
type Faulty struct {
	cas.PackStore

	mu    sync.Mutex
	fault Fault
	armed bool
	calls int      // calls the fault counts since Set
	fired []string // "op name" of each call failed
}

var _ cas.PackStore = (*Faulty)(nil)

// NewFaulty wraps s; no call fails until Set.
func NewFaulty(s cas.PackStore) *Faulty { return &Faulty{PackStore: s} }

// Set replaces the fault and restarts the count of calls.
func (f *Faulty) Set(fault Fault) {
	if fault.Err == nil {
		fault.Err = ErrInjected
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fault, f.armed, f.calls = fault, true, 0
}

// Clear removes the fault: no call fails any longer.
func (f *Faulty) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed = false
}

// Fired returns the calls failed so far, as "op name" ("create
// 0123....pack"; the name is empty for Sync, List and RemoveIncomplete).
func (f *Faulty) Fired() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.fired...)
}

// hit counts a call of op on pack name and returns the error it must fail
// with, or nil.
func (f *Faulty) hit(op Op, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.armed || (f.fault.Op != AnyOp && f.fault.Op != op) {
		return nil
	}
	f.calls++
	if f.fault.N != 0 && f.calls != f.fault.N {
		return nil
	}
	f.fired = append(f.fired, string(op)+" "+name)
	return f.fault.Err
}

// Create fails or creates a pack whose writer can fail.
func (f *Faulty) Create(ctx context.Context, name string) (cas.PackWriter, error) {
	if err := f.hit(OpCreate, name); err != nil {
		return nil, err
	}
	w, err := f.PackStore.Create(ctx, name)
	if err != nil {
		return nil, err
	}
	return &faultyWriter{w: w, f: f, name: name}, nil
}

// Sync fails or syncs.
func (f *Faulty) Sync(ctx context.Context) error {
	if err := f.hit(OpSync, ""); err != nil {
		return err
	}
	return f.PackStore.Sync(ctx)
}

// Open fails or opens a reader whose reads can fail.
func (f *Faulty) Open(ctx context.Context, name string) (cas.PackReader, error) {
	if err := f.hit(OpOpen, name); err != nil {
		return nil, err
	}
	r, err := f.PackStore.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return faultyReader{PackReader: r, f: f, name: name}, nil
}

// Stat fails or stats.
func (f *Faulty) Stat(ctx context.Context, name string) (cas.StoredPack, error) {
	if err := f.hit(OpStat, name); err != nil {
		return cas.StoredPack{}, err
	}
	return f.PackStore.Stat(ctx, name)
}

// List fails before listing anything, or lists.
func (f *Faulty) List(ctx context.Context, fn func(cas.StoredPack) error) error {
	if err := f.hit(OpList, ""); err != nil {
		return err
	}
	return f.PackStore.List(ctx, fn)
}

// Remove fails or removes.
func (f *Faulty) Remove(ctx context.Context, name string) error {
	if err := f.hit(OpRemove, name); err != nil {
		return err
	}
	return f.PackStore.Remove(ctx, name)
}

// SetAside fails or sets the pack aside.
func (f *Faulty) SetAside(ctx context.Context, name string) error {
	if err := f.hit(OpSetAside, name); err != nil {
		return err
	}
	return f.PackStore.SetAside(ctx, name)
}

// RemoveIncomplete fails or removes.
func (f *Faulty) RemoveIncomplete(ctx context.Context) (int64, error) {
	if err := f.hit(OpRemoveIncomplete, ""); err != nil {
		return 0, err
	}
	return f.PackStore.RemoveIncomplete(ctx)
}

type faultyWriter struct {
	w    cas.PackWriter
	f    *Faulty
	name string
}

// Write fails, writing nothing, or writes.
func (w *faultyWriter) Write(b []byte) (int, error) {
	if err := w.f.hit(OpWrite, w.name); err != nil {
		return 0, err
	}
	return w.w.Write(b)
}

// Close fails, aborting the wrapped writer so that nothing is stored, or
// closes.
func (w *faultyWriter) Close() error {
	if err := w.f.hit(OpClose, w.name); err != nil {
		w.w.Abort()
		return err
	}
	return w.w.Close()
}

// Abort fails, leaving the wrapped writer as it is (a later Abort may
// succeed), or aborts.
func (w *faultyWriter) Abort() error {
	if err := w.f.hit(OpAbort, w.name); err != nil {
		return err
	}
	return w.w.Abort()
}

type faultyReader struct {
	cas.PackReader
	f    *Faulty
	name string
}

// ReadAt fails, reading nothing, or reads.
func (r faultyReader) ReadAt(b []byte, off int64) (int, error) {
	if err := r.f.hit(OpReadAt, r.name); err != nil {
		return 0, err
	}
	return r.PackReader.ReadAt(b, off)
}
