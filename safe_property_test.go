package casckpt

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/internal/testtree"
)

// safeLeaves are the paths a random history edits: files and links, never
// directories (those come and go with them).
var safeLeaves = []string{"a", "b", "c", "d/e", "d/f", "g/h/i"}

// absent is the state of a leaf that is not there.
var absent = testtree.Entry{Dir: true}

// safeHistory is a random history of agent turns (with checkpoints inside
// some), writes an agent records, and a person's edits, on a small tree.
type safeHistory struct {
	fx  *turnFixture
	rng *rand.Rand
	n   int // makes every content new
	// owner says who last changed each leaf: "agent" (a turn that changed
	// it from start to end, or a recorded write) or "person".
	owner map[string]string
	// agentMade are the states agents ever left each leaf in.
	agentMade map[string][]testtree.Entry
	step      int            // counts snapshots, turn ends and recorded writes
	created   map[cas.ID]int // the step that created each snapshot
	ends      []int          // the steps at which turns ended
	writes    []int          // the steps at which writes were recorded
	snaps     []cas.ID       // in order of creation
}

// leafState is what leaf p holds in tree (absent when nothing).
func leafState(tree testtree.Tree, p string) testtree.Entry {
	if e, ok := tree[p]; ok && !e.Dir {
		return e
	}
	return absent
}

// edit changes leaf p as who would: new content, a deletion, a new link,
// or (for a person) the executable bit.
func (h *safeHistory) edit(t *testing.T, p, who string) {
	t.Helper()
	full := filepath.Join(h.fx.dir, filepath.FromSlash(p))
	old := leafState(testtree.Read(t, h.fx.dir), p)
	h.n++
	e := testtree.Entry{Data: fmt.Sprintf("%s %d\n", who, h.n)}
	switch r := h.rng.IntN(6); {
	case r == 0:
		e = absent
	case r == 1:
		e = testtree.Entry{Link: fmt.Sprintf("%s-%d", who, h.n)}
	case r == 2 && who == "person" && old != absent && old.Link == "":
		e = old
		e.Exec = !old.Exec
	}
	if err := os.RemoveAll(full); err != nil {
		t.Fatal(err)
	}
	if e != absent {
		testtree.Write(t, h.fx.dir, testtree.Tree{p: e})
	}
	if who == "person" {
		h.owner[p] = "person"
	}
}

func (h *safeHistory) leaf() string { return safeLeaves[h.rng.IntN(len(safeLeaves))] }

func (h *safeHistory) snapshot(t *testing.T) cas.ID {
	t.Helper()
	return h.snapshotTurn(t, "", false)
}

// snapshotTurn takes a snapshot labelled with turn (ending it with end)
// and notes when it was created.
func (h *safeHistory) snapshotTurn(t *testing.T, turn string, end bool) cas.ID {
	t.Helper()
	id := h.fx.snapshotTurn(t, turn, end)
	h.step++
	if _, ok := h.created[id]; !ok {
		h.created[id] = h.step
		h.snaps = append(h.snaps, id)
	}
	return id
}

// agentTurn is a turn of one to three edits, with a checkpoint inside it
// now and then.
func (h *safeHistory) agentTurn(t *testing.T) {
	t.Helper()
	id := h.fx.newTurn()
	h.snapshotTurn(t, id, false)
	start := testtree.Read(t, h.fx.dir)
	for i := range 1 + h.rng.IntN(3) {
		h.edit(t, h.leaf(), "agent")
		if i == 0 && h.rng.IntN(3) == 0 {
			h.snapshotTurn(t, id, false) // a checkpoint in the turn
		}
	}
	h.snapshotTurn(t, id, true)
	h.ends = append(h.ends, h.step)
	end := testtree.Read(t, h.fx.dir)
	for _, p := range safeLeaves {
		if leafState(start, p) != leafState(end, p) {
			h.owner[p] = "agent"
			h.agentMade[p] = append(h.agentMade[p], leafState(end, p))
		}
	}
}

// recordedWrite is an agent's edit outside a turn, recorded.
func (h *safeHistory) recordedWrite(t *testing.T) {
	t.Helper()
	p := h.leaf()
	h.edit(t, p, "agent")
	if _, err := h.fx.s.RecordWrite(context.Background(), h.fx.dir, p); err != nil {
		t.Fatal(err)
	}
	h.step++
	h.writes = append(h.writes, h.step)
	h.owner[p] = "agent"
	h.agentMade[p] = append(h.agentMade[p], leafState(testtree.Read(t, h.fx.dir), p))
}

// TestSafeRestoreOverRandomHistories: after a safe restore to any snapshot
// of a random history, every path is the snapshot's or reported kept; a
// person's state that no agent ever left is still in the working tree; what
// agents left last is restored; and the pre-restore snapshot holds the tree
// from before, so nothing a person made is lost.
func TestSafeRestoreOverRandomHistories(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			h := &safeHistory{
				fx: newTurnFixture(t, testtree.Tree{"a": {Data: "first a"}, "d/e": {Data: "first e"}}), rng: rand.New(rand.NewPCG(seed, 11)),
				owner: map[string]string{}, agentMade: map[string][]testtree.Entry{}, created: map[cas.ID]int{},
			}
			h.snapshot(t)
			for range 4 + h.rng.IntN(8) {
				switch h.rng.IntN(6) {
				case 0, 1:
					h.agentTurn(t)
				case 2:
					h.recordedWrite(t)
				case 3, 4:
					h.edit(t, h.leaf(), "person")
				case 5:
					h.snapshot(t)
				}
			}
			h.check(t, h.snaps[h.rng.IntN(len(h.snaps))])
		})
	}
}

// check restores snap safely and checks the outcome.
func (h *safeHistory) check(t *testing.T, snap cas.ID) {
	t.Helper()
	ctx := context.Background()
	before := testtree.Read(t, h.fx.dir)
	newest, err := h.fx.s.List(ctx, h.fx.dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	res, after := h.fx.restore(t, snap, false)
	wantSafe := slices.ContainsFunc(h.ends, func(s int) bool { return s >= h.created[snap] }) ||
		slices.ContainsFunc(h.writes, func(s int) bool { return s > h.created[snap] })
	if res.Safe != wantSafe {
		t.Errorf("safe %v, want %v", res.Safe, wantSafe)
	}
	target := h.export(t, snap)
	kept := keptPaths(res.Kept)
	for p := range union(target, after) {
		if _, ok := kept[p]; !ok && target[p] != after[p] {
			t.Errorf("%s: neither the snapshot's (%+v) nor kept: %+v", p, target[p], after[p])
		}
	}
	for _, p := range safeLeaves {
		was, snapState, now := leafState(before, p), leafState(target, p), leafState(after, p)
		switch {
		case was == snapState || !res.Safe:
		case h.owner[p] == "person" && !slices.Contains(h.agentMade[p], was) && now != was:
			t.Errorf("%s: a person's %+v was replaced by %+v", p, was, now)
		case h.owner[p] == "agent" && now != snapState:
			t.Errorf("%s: the agent's %+v was not restored to %+v: %+v (kept: %q)", p, was, snapState, now, kept[p])
		}
	}
	pre := res.PreRestoreID
	if pre.IsZero() {
		pre = newest[0].ID
	}
	if d := testtree.Equal(before, h.export(t, pre)); d != "" {
		t.Errorf("the pre-restore snapshot does not hold the tree from before: %s", d)
	}
}

func (h *safeHistory) export(t *testing.T, id cas.ID) testtree.Tree {
	t.Helper()
	var buf bytes.Buffer
	if err := h.fx.s.Export(context.Background(), h.fx.dir, Ref(id.String()), &buf); err != nil {
		t.Fatal(err)
	}
	return testtree.ReadTar(t, &buf)
}

func union(a, b testtree.Tree) map[string]bool {
	out := map[string]bool{}
	for p := range a {
		out[p] = true
	}
	for p := range b {
		out[p] = true
	}
	return out
}
