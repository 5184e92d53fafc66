package casckpt

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
)

// Manager gives an agent host the "checkpoint once per turn" discipline:
// the first EnsureCheckpoint of a project in a turn snapshots it, later
// ones in the same turn do nothing, and nothing it does can fail or panic
// the caller. With a turn ID (see NewTurn) it also records the turn: the
// checkpoint starts it, and EndTurn ends it in every project the turn
// checkpointed, so the store knows which changes are the agent's (see
// TurnInfo). It is safe for concurrent use.
type Manager struct {
	store *Store
	opts  SnapshotOptions

	mu            sync.Mutex
	session, turn string          // the current turn's IDs ("": none)
	done          map[string]bool // projects checkpointed this turn
}

// NewManager returns a Manager taking snapshots in store with opts (whose
// Reason is replaced by each call's).
func NewManager(store *Store, opts SnapshotOptions) *Manager {
	return &Manager{store: store, opts: opts, done: map[string]bool{}}
}

// NewTurn starts a conversation turn: every project may be checkpointed
// once more. session and turn are the host's IDs of the conversation and
// of the turn (see CheckLabel); the checkpoints of the turn are labelled
// with them, and the first one in each project starts the turn there.
// With turn "" no turn is recorded (session "": none is named); an ID that
// CheckLabel refuses makes each checkpoint of the turn report the error.
func (m *Manager) NewTurn(session, turn string) {
	m.mu.Lock()
	m.done = map[string]bool{}
	m.session, m.turn = session, turn
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
	opts := m.opts
	opts.Reason, opts.Session, opts.Turn = reason, m.session, m.turn
	m.mu.Unlock()
	res, err := m.store.Snapshot(ctx, root, opts)
	if err != nil {
		m.mu.Lock()
		delete(m.done, root) // let a later call in this turn try again
		m.mu.Unlock()
	}
	return CheckpointReport{Project: root, Result: res, Err: err}
}

// EndTurn ends the current turn in every project it checkpointed: each is
// snapshotted once more (reason "end of turn"), and the snapshot is the
// turn's end. It reports on each project, in workdir order, and never fails
// the caller. Without a turn ID it does nothing.
func (m *Manager) EndTurn(ctx context.Context) []CheckpointReport {
	m.mu.Lock()
	opts := m.opts
	opts.Reason, opts.Session, opts.Turn, opts.EndTurn = "end of turn", m.session, m.turn, true
	var roots []string
	if m.turn != "" {
		for root := range m.done {
			roots = append(roots, root)
		}
	}
	m.mu.Unlock()
	slices.Sort(roots)
	reports := []CheckpointReport{}
	for _, root := range roots {
		reports = append(reports, m.endIn(ctx, root, opts))
	}
	return reports
}

// endIn takes the snapshot of project root that ends the turn.
func (m *Manager) endIn(ctx context.Context, root string, opts SnapshotOptions) (rep CheckpointReport) {
	defer func() {
		if r := recover(); r != nil {
			rep.Err = fmt.Errorf("end of turn in %s: internal error: %v", root, r)
		}
	}()
	res, err := m.store.Snapshot(ctx, root, opts)
	return CheckpointReport{Project: root, Result: res, Err: err}
}

// RecordWrite records that the agent has just written path (absolute, or
// relative to the working directory), in the write ledger of the project
// holding it (see Store.Root): its current content, or its absence,
// is the agent's (see Store.RecordWrite). A host calls it after each write
// of its edit tools. It never panics; the caller may ignore its error.
func (m *Manager) RecordWrite(ctx context.Context, path string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("record write of %s: internal error: %v", path, r)
		}
	}()
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	root, err := m.store.Root(ctx, abs)
	if err != nil {
		return err
	}
	_, err = m.store.RecordWrite(ctx, root, abs)
	return err
}
