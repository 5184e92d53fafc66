package casckpt

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/cas"
)

// healTurn is a project whose turn t1 rewrote data.bin (an object of its
// own) and notes.txt: older is the turn's start, newest its end, and the
// tree is unchanged since. The stored copy of data.bin's new bytes is
// then damaged: the working tree holds the only intact copy of v2.
type healTurn struct {
	*healFixture
	older, newest cas.ID
	v1, v2        []byte
}

func newHealTurn(t *testing.T) *healTurn {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "store"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := &healTurn{healFixture: &healFixture{s: s, dir: t.TempDir()}}
	rng := rand.New(rand.NewPCG(3, 4))
	h.v1, h.v2 = make([]byte, 300<<10), make([]byte, 300<<10)
	for i := range h.v1 {
		h.v1[i], h.v2[i] = byte(rng.Uint32()), byte(rng.Uint32())
	}
	write := func(data []byte, notes string) {
		must(t, os.WriteFile(filepath.Join(h.dir, "data.bin"), data, 0o644))
		must(t, os.WriteFile(filepath.Join(h.dir, "notes.txt"), []byte(notes), 0o644))
	}
	snap := func(opts SnapshotOptions) cas.ID {
		r, err := s.Snapshot(context.Background(), h.dir, opts)
		if err != nil || !r.Created {
			t.Fatalf("snapshot: %+v %v", r, err)
		}
		return r.ID
	}
	write(h.v1, "v1\n")
	must(t, os.WriteFile(filepath.Join(h.dir, "keep.txt"), []byte("same\n"), 0o644))
	h.older = snap(SnapshotOptions{Turn: "t1"})
	write(h.v2, "v2\n")
	h.newest = snap(SnapshotOptions{Turn: "t1", EndTurn: true})
	for _, id := range h.entry(t, h.newest, "data.bin").Chunks {
		h.junk(t, id)
	}
	return h
}

// junk overwrites the stored bytes of object id (of its whole block, with
// every other member) with junk.
func (h *healTurn) junk(t *testing.T, id cas.ID) {
	t.Helper()
	file, e := h.where(t, id)
	header := int64(44) // cas's object header; a block's is 12
	if e.InBlock() {
		header = 12
	}
	b, err := os.ReadFile(file)
	must(t, err)
	for i := range int64(e.StoredLen) {
		b[int64(e.Offset)+header+i] = 0xde
	}
	must(t, os.WriteFile(file, b, 0o600))
}

// check asserts that data.bin holds want, and that snapshot pre (the one
// taken before the change; zero: the newest) gives back v2 exactly: the bytes the change
// overwrote were stored intact, and verify finds data.bin intact in every
// snapshot (the heal replaced the copy that the turn's end shares).
func (h *healTurn) check(t *testing.T, pre cas.ID, want []byte) {
	t.Helper()
	ctx := context.Background()
	if got, _ := os.ReadFile(filepath.Join(h.dir, "data.bin")); !bytes.Equal(got, want) {
		t.Fatalf("data.bin holds %d bytes, not the ones restored", len(got))
	}
	if pre.IsZero() { // the tree equalled the newest snapshot
		pre = h.newest
	}
	if _, err := h.s.Restore(ctx, h.dir, Ref(pre.String()), RestoreOptions{Paths: []string{"data.bin"}}); err != nil {
		t.Fatalf("restore of the snapshot from before: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(h.dir, "data.bin")); !bytes.Equal(got, h.v2) {
		t.Fatal("the snapshot from before does not give back the overwritten bytes")
	}
	v, err := h.s.Verify(ctx)
	if err != nil || slices.ContainsFunc(v.Damaged, func(d DamagedSnapshot) bool { return strings.Contains(d.Reason, "/data.bin") }) {
		t.Fatalf("verify after the heal: %+v %v", v.Damaged, err)
	}
}

// TestRestoreHealsTheOnlyIntactCopy: restore (whole, --safe, of one path)
// of the turn's start over a tree whose stored copy is damaged stores the
// file's bytes again before overwriting it: the restore succeeds and its
// pre-restore snapshot gives the bytes back.
func TestRestoreHealsTheOnlyIntactCopy(t *testing.T) {
	for name, opts := range map[string]RestoreOptions{
		"whole": {}, "safe": {Safe: true}, "path": {Paths: []string{"data.bin"}},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHealTurn(t)
			res, err := h.s.Restore(context.Background(), h.dir, Ref(h.older.String()), opts)
			if err != nil || res.Written == 0 {
				t.Fatalf("restore over the only intact copy: %+v %v", res, err)
			}
			h.check(t, res.PreRestoreID, h.v1)
		})
	}
}

// TestUndoHealsTheOnlyIntactCopy: undo of the turn does the same.
func TestUndoHealsTheOnlyIntactCopy(t *testing.T) {
	h := newHealTurn(t)
	res, err := h.s.Undo(context.Background(), h.dir, "t1", UndoOptions{})
	if err != nil || len(res.Reverted) != 2 {
		t.Fatalf("undo over the only intact copy: %+v %v", res, err)
	}
	h.check(t, res.PreUndoID, h.v1)
}
