package casckpt

import (
	"context"
	"fmt"
	"sync"
)

// Manager gives an agent host the "checkpoint once per turn" discipline:
// the first EnsureCheckpoint of a project in a turn snapshots it, later
// ones in the same turn do nothing, and nothing it does can fail or panic
// the caller. It is safe for concurrent use.
type Manager struct {
	store *Store
	opts  SnapshotOptions

	mu   sync.Mutex
	done map[string]bool // projects checkpointed this turn
}

// NewManager returns a Manager taking snapshots in store with opts (whose
// Reason is replaced by each call's).
func NewManager(store *Store, opts SnapshotOptions) *Manager {
	return &Manager{store: store, opts: opts, done: map[string]bool{}}
}

// NewTurn starts a conversation turn: every project may be checkpointed
// once more.
func (m *Manager) NewTurn() {
	m.mu.Lock()
	m.done = map[string]bool{}
	m.mu.Unlock()
}

// CheckpointReport says what EnsureCheckpoint did.
type CheckpointReport struct {
	Project string // the project root checkpointed
	// AlreadyDone: the project was checkpointed earlier in this turn.
	AlreadyDone bool
	Result      SnapshotResult
	// Err is why no checkpoint could be taken; the caller goes on.
	Err error
}

// EnsureCheckpoint makes sure the project holding path (see Store.Root)
// has a checkpoint taken in this turn, before the agent changes it. It
// reports and returns; it never fails the caller.
func (m *Manager) EnsureCheckpoint(ctx context.Context, path, reason string) (rep CheckpointReport) {
	defer func() {
		if r := recover(); r != nil {
			rep.Err = fmt.Errorf("checkpoint of %s: internal error: %v", path, r)
		}
	}()
	root, err := m.store.Root(ctx, path)
	if err == nil {
		root, err = Workdir(root)
	}
	if err != nil {
		return CheckpointReport{Project: path, Err: err}
	}
	m.mu.Lock()
	if m.done[root] {
		m.mu.Unlock()
		return CheckpointReport{Project: root, AlreadyDone: true}
	}
	m.done[root] = true
	m.mu.Unlock()
	opts := m.opts
	opts.Reason = reason
	res, err := m.store.Snapshot(ctx, root, opts)
	if err != nil {
		m.mu.Lock()
		delete(m.done, root) // let a later call in this turn try again
		m.mu.Unlock()
	}
	return CheckpointReport{Project: root, Result: res, Err: err}
}
