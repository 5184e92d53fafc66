package casckpt

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/internal/restorer"
	"github.com/casckpt/casckpt/internal/testtree"
)

// turnFixture is a store whose clock moves a second at each reading, and a
// project in it.
type turnFixture struct {
	s       *Store
	dir     string
	workdir string
	mu      sync.Mutex
	now     time.Time
	turns   int
}

func newTurnFixture(t *testing.T, tree testtree.Tree) *turnFixture {
	t.Helper()
	fx := &turnFixture{dir: t.TempDir(), now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	s, err := Open(filepath.Join(t.TempDir(), "store"), Options{Now: fx.clock})
	if err != nil {
		t.Fatal(err)
	}
	fx.s = s
	t.Cleanup(func() {
		if v, err := s.Verify(context.Background()); err != nil || len(v.Damaged) != 0 {
			t.Errorf("the store does not verify when the test ends: damaged %+v, %v", v.Damaged, err)
		}
	})
	testtree.Write(t, fx.dir, tree)
	fx.workdir, _ = Workdir(fx.dir)
	return fx
}

func (fx *turnFixture) clock() time.Time {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	fx.now = fx.now.Add(time.Second)
	return fx.now
}

// snapshot snapshots the project (keeping every snapshot) and returns the
// snapshot's ID: the newest one's when the tree did not change.
func (fx *turnFixture) snapshot(t *testing.T) cas.ID {
	t.Helper()
	return fx.snapshotTurn(t, "", false)
}

// snapshotTurn is snapshot labelled with a turn, which it ends with end.
func (fx *turnFixture) snapshotTurn(t *testing.T, turn string, end bool) cas.ID {
	t.Helper()
	opts := SnapshotOptions{Keep: -1, Turn: turn, EndTurn: end}
	if turn != "" {
		opts.Session = "session"
	}
	r, err := fx.s.Snapshot(context.Background(), fx.dir, opts)
	if err != nil || r.ID.IsZero() {
		t.Fatalf("snapshot: %+v %v", r, err)
	}
	return r.ID
}

// newTurn returns a new turn ID.
func (fx *turnFixture) newTurn() string {
	fx.turns++
	return fmt.Sprintf("turn-%d", fx.turns)
}

// turn runs agent as one turn: a snapshot labelled with a new turn ID
// starts it and one ends it, as a host does.
func (fx *turnFixture) turn(t *testing.T, agent func()) {
	t.Helper()
	id := fx.newTurn()
	fx.snapshotTurn(t, id, false)
	agent()
	fx.snapshotTurn(t, id, true)
}

// restore restores snapshot id safely (in a dry run: dry) and returns the
// result, and the tree left.
func (fx *turnFixture) restore(t *testing.T, id cas.ID, dry bool, paths ...string) (RestoreResult, testtree.Tree) {
	t.Helper()
	res, err := fx.s.Restore(context.Background(), fx.dir, Ref(id.String()), RestoreOptions{Safe: true, DryRun: dry, Paths: paths})
	if err != nil {
		t.Fatal(err)
	}
	return res, testtree.Read(t, fx.dir)
}

func keptPaths(k []KeptPath) map[string]string {
	out := map[string]string{}
	for _, p := range k {
		out[p.Path] = p.Reason
	}
	return out
}

func TestSafeRestoreKeepsWhatNoAgentLeft(t *testing.T) {
	fx := newTurnFixture(t, testtree.Tree{"a": {Data: "a0"}, "b": {Data: "b0"}, "c": {Data: "c0"}, "keep/me": {Data: "k"}})
	snap := fx.snapshot(t)
	fx.turn(t, func() { // edits, deletes and creates, as a shell command would
		testtree.Write(t, fx.dir, testtree.Tree{"a": {Data: "a1"}, "made/by/shell": {Data: "x", Exec: true}, "d/x": {Data: "agent"}})
		removeAll(t, fx.dir, "b", "keep")
	})
	testtree.Write(t, fx.dir, testtree.Tree{"c": {Data: "person"}, "p": {Data: "person"}}) // between turns
	fx.turn(t, func() { testtree.Write(t, fx.dir, testtree.Tree{"e": {Data: "agent"}}) })
	testtree.Write(t, fx.dir, testtree.Tree{"d/x": {Data: "person after"}}) // after the agent's write
	before := testtree.Read(t, fx.dir)

	res, tree := fx.restore(t, snap, true)
	if !res.Safe || diffTrees(before, tree) != "" {
		t.Fatalf("dry run: safe %v, changed the tree: %s", res.Safe, diffTrees(before, tree))
	}
	res, tree = fx.restore(t, snap, false)
	want := testtree.Tree{
		"a": {Data: "a0"}, "b": {Data: "b0"}, "keep": {Dir: true}, "keep/me": {Data: "k"}, // the agent's, undone
		"c": {Data: "person"}, "p": {Data: "person"}, "d": {Dir: true}, "d/x": {Data: "person after"}, // kept
	}
	if d := diffTrees(want, tree); d != "" || !res.Safe || res.PreRestoreID.IsZero() {
		t.Fatalf("after restore --safe: %s (safe %v, pre-restore %s)", d, res.Safe, res.PreRestoreID)
	}
	wantKept := map[string]string{
		"c": restorer.ReasonNotAgent, "p": restorer.ReasonNotAgent,
		"d": restorer.ReasonHoldsKept, "d/x": restorer.ReasonChangedSince,
	}
	if got := keptPaths(res.Kept); !maps.Equal(got, wantKept) {
		t.Fatalf("kept %v, want %v", got, wantKept)
	}
}

func TestSafeRestoreUsesRecordedWrites(t *testing.T) {
	ctx := context.Background()
	fx := newTurnFixture(t, testtree.Tree{"f": {Data: "f0"}, "g": {Data: "g0"}, "h": {Data: "h0"}})
	snap := fx.snapshot(t)
	testtree.Write(t, fx.dir, testtree.Tree{"f": {Data: "agent"}, "g": {Data: "agent"}, "new": {Data: "agent"}})
	removeAll(t, fx.dir, "h")
	if n, err := fx.s.RecordWrite(ctx, fx.dir, "f", "g", "new", "h"); err != nil || n != 4 {
		t.Fatalf("record-write: %d %v", n, err)
	}
	testtree.Write(t, fx.dir, testtree.Tree{"g": {Data: "person"}})
	res, tree := fx.restore(t, snap, false)
	want := testtree.Tree{"f": {Data: "f0"}, "g": {Data: "person"}, "h": {Data: "h0"}}
	if d := diffTrees(want, tree); d != "" || !res.Safe {
		t.Fatalf("after restore --safe: %s (safe %v)", d, res.Safe)
	}
	if got := keptPaths(res.Kept); !maps.Equal(got, map[string]string{"g": restorer.ReasonChangedSince}) {
		t.Fatalf("kept %v", got)
	}
}

func TestSafeRestoreFallsBackWhenNothingIsKnown(t *testing.T) {
	fx := newTurnFixture(t, testtree.Tree{"a": {Data: "a0"}})
	// A turn and a recorded write before the snapshot say nothing of what
	// happened since.
	fx.turn(t, func() { testtree.Write(t, fx.dir, testtree.Tree{"a": {Data: "a1"}}) })
	testtree.Write(t, fx.dir, testtree.Tree{"c": {Data: "c"}})
	if _, err := fx.s.RecordWrite(context.Background(), fx.dir, "c"); err != nil {
		t.Fatal(err)
	}
	snap := fx.snapshot(t)
	testtree.Write(t, fx.dir, testtree.Tree{"a": {Data: "someone"}, "b": {Data: "someone"}})
	res, tree := fx.restore(t, snap, false)
	if d := diffTrees(testtree.Tree{"a": {Data: "a1"}, "c": {Data: "c"}}, tree); d != "" || res.Safe || len(res.Kept) != 0 || res.Kept == nil {
		t.Fatalf("fallback: %s, safe %v, kept %v", d, res.Safe, res.Kept)
	}
	// A turn that began and ended on the snapshot (the tree unchanged) is
	// a turn since the snapshot: what changed after it is kept.
	fx.turn(t, func() {})
	testtree.Write(t, fx.dir, testtree.Tree{"a": {Data: "someone"}})
	snaps, err := fx.s.List(context.Background(), fx.dir, 0)
	if err != nil || len(snaps) < 2 {
		t.Fatal(snaps, err)
	}
	res, tree = fx.restore(t, snaps[0].ID, false)
	if d := diffTrees(testtree.Tree{"a": {Data: "someone"}, "c": {Data: "c"}}, tree); d != "" || !res.Safe {
		t.Fatalf("after an empty turn: %s, safe %v, kept %v", d, res.Safe, res.Kept)
	}
}

func TestSafeRestoreOfPaths(t *testing.T) {
	fx := newTurnFixture(t, testtree.Tree{"a": {Data: "a0"}, "b": {Data: "b0"}, "c": {Data: "c0"}})
	snap := fx.snapshot(t)
	fx.turn(t, func() { testtree.Write(t, fx.dir, testtree.Tree{"a": {Data: "a1"}, "b": {Data: "b1"}}) })
	testtree.Write(t, fx.dir, testtree.Tree{"c": {Data: "person"}})
	res, tree := fx.restore(t, snap, false, "a", "c")
	want := testtree.Tree{"a": {Data: "a0"}, "b": {Data: "b1"}, "c": {Data: "person"}}
	if d := diffTrees(want, tree); d != "" || !res.Safe || !maps.Equal(keptPaths(res.Kept), map[string]string{"c": restorer.ReasonNotAgent}) {
		t.Fatalf("restore --safe a c: %s, safe %v, kept %v", d, res.Safe, res.Kept)
	}
}

// A turn under way when the snapshot was taken counts: what it changed
// after the snapshot is the agent's.
func TestSafeRestoreToASnapshotWithinATurn(t *testing.T) {
	fx := newTurnFixture(t, testtree.Tree{"a": {Data: "a0"}, "b": {Data: "b0"}})
	var snap cas.ID
	fx.turn(t, func() {
		testtree.Write(t, fx.dir, testtree.Tree{"a": {Data: "a1"}})
		snap = fx.snapshot(t)
		testtree.Write(t, fx.dir, testtree.Tree{"a": {Data: "a2"}, "b": {Data: "b2"}})
	})
	testtree.Write(t, fx.dir, testtree.Tree{"b": {Data: "person"}})
	res, tree := fx.restore(t, snap, false)
	if d := diffTrees(testtree.Tree{"a": {Data: "a1"}, "b": {Data: "person"}}, tree); d != "" || !res.Safe {
		t.Fatalf("%s, safe %v, kept %v", d, res.Safe, res.Kept)
	}
}

func removeAll(t *testing.T, dir string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.RemoveAll(filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
}

func diffTrees(want, got testtree.Tree) string { return testtree.Equal(testtree.WithDirs(want), got) }
