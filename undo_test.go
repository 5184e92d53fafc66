package casckpt_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/testtree"
)

// lines returns ten numbered lines, with line i (from 1) replaced by with
// for each pair of edits.
func lines(edits ...any) string {
	ls := make([]string, 10)
	for i := range ls {
		ls[i] = fmt.Sprintf("line %d\n", i+1)
	}
	for i := 0; i+1 < len(edits); i += 2 {
		ls[edits[i].(int)-1] = edits[i+1].(string) + "\n"
	}
	return strings.Join(ls, "")
}

// turnRecorder runs agent turns in one project, labelling the snapshots
// that start and end them.
type turnRecorder struct {
	t    *testing.T
	s    *casckpt.Store
	proj string
}

// start starts turn id on a snapshot of the project.
func (r *turnRecorder) start(id string) casckpt.SnapshotResult {
	r.t.Helper()
	return mustSnapshot(r.t, r.s, r.proj, casckpt.SnapshotOptions{Reason: id + " start", Turn: id})
}

// turn starts turn id, makes change (the agent's work) and ends the turn.
func (r *turnRecorder) turn(id string, change testtree.Tree, remove ...string) {
	r.t.Helper()
	r.start(id)
	edit(r.t, r.proj, change, remove...)
	mustSnapshot(r.t, r.s, r.proj, casckpt.SnapshotOptions{Reason: id + " end", Turn: id, EndTurn: true})
}

// edit writes change into dir and removes the paths in remove.
func edit(t *testing.T, dir string, change testtree.Tree, remove ...string) {
	t.Helper()
	testtree.Write(t, dir, change)
	for _, p := range remove {
		if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			t.Fatal(err)
		}
	}
}

// fiveTurns makes a project and five turns in it, with a person's edit
// between the second and the third. Turn t3 changes lines of a.txt that
// t4 does not touch, b.txt that no one touches after it, and c.txt on the
// line t5 changes too; it creates t3.txt and deletes old.txt.
func fiveTurns(t *testing.T, s *casckpt.Store) (proj string, r *turnRecorder) {
	proj = filepath.Join(t.TempDir(), "proj")
	testtree.Write(t, proj, testtree.Tree{"a.txt": {Data: lines()}, "b.txt": {Data: lines()},
		"c.txt": {Data: lines()}, "old.txt": {Data: "old\n", Exec: true}})
	proj, _ = filepath.EvalSymlinks(proj)
	r = &turnRecorder{t: t, s: s, proj: proj}
	r.turn("t1", testtree.Tree{"a.txt": {Data: lines(1, "t1")}})
	r.turn("t2", testtree.Tree{"new.txt": {Data: "t2\n"}})
	edit(t, proj, testtree.Tree{"b.txt": {Data: lines(9, "person")}})
	r.turn("t3", testtree.Tree{"a.txt": {Data: lines(1, "t1", 3, "t3")}, "b.txt": {Data: lines(2, "t3", 9, "person")},
		"c.txt": {Data: lines(5, "t3")}, "t3.txt": {Data: "t3\n"}}, "old.txt")
	r.turn("t4", testtree.Tree{"a.txt": {Data: lines(1, "t1", 3, "t3", 8, "t4")}})
	r.turn("t5", testtree.Tree{"c.txt": {Data: lines(5, "t5")}})
	return proj, r
}

// TestUndoMiddleTurn: undoing the third of five turns reverts what it
// alone changed, merges a file a later turn changed elsewhere, leaves a
// file a later turn changed on the same line, and keeps every other
// turn's and the person's work; a dry run first changes nothing.
func TestUndoMiddleTurn(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	proj, _ := fiveTurns(t, s)
	edit(t, proj, testtree.Tree{"mine.txt": {Data: "after the turns\n"}})
	before := testtree.Read(t, proj)
	snaps := listIDs(t, s, proj)
	dry, err := s.Undo(ctx, proj, "t3", casckpt.UndoOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := testtree.Equal(before, testtree.Read(t, proj)); d != "" || !slices.Equal(snaps, listIDs(t, s, proj)) || !dry.PreUndoID.IsZero() {
		t.Fatalf("the dry run changed something: %s, pre-undo %s", d, dry.PreUndoID)
	}
	res, err := s.Undo(ctx, proj, "t3", casckpt.UndoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []casckpt.UndoResult{dry, res} {
		if r.Turn != "t3" || !slices.Equal(r.Reverted, []string{"b.txt", "old.txt", "t3.txt"}) || !slices.Equal(r.Merged, []string{"a.txt"}) ||
			len(r.Conflicts) != 1 || r.Conflicts[0].Path != "c.txt" || r.Written != 3 || r.Deleted != 1 {
			t.Errorf("dry run %v: %+v", r.DryRun, r)
		}
	}
	want := testtree.Tree{"a.txt": {Data: lines(1, "t1", 8, "t4")}, "b.txt": {Data: lines(9, "person")},
		"c.txt": {Data: lines(5, "t5")}, "old.txt": {Data: "old\n", Exec: true}, "new.txt": {Data: "t2\n"},
		"mine.txt": {Data: "after the turns\n"}}
	if d := testtree.Equal(want, testtree.Read(t, proj)); d != "" {
		t.Errorf("after the undo: %s", d)
	}
	list, err := s.List(ctx, proj, 1)
	if err != nil {
		t.Fatal(err)
	}
	if list[0].ID != res.PreUndoID || !strings.HasPrefix(list[0].Reason, casckpt.PreUndoPrefix) {
		t.Errorf("newest snapshot %s %q, want the pre-undo one %s", list[0].ID, list[0].Reason, res.PreUndoID)
	}
	restored, err := s.Restore(ctx, proj, casckpt.Ref(res.PreUndoID.String()), casckpt.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := testtree.Equal(before, testtree.Read(t, proj)); d != "" {
		t.Errorf("restoring the pre-undo snapshot (%+v): %s", restored, d)
	}
}

// listIDs returns the IDs of the project's snapshots, newest first.
func listIDs(t *testing.T, s *casckpt.Store, proj string) []casckpt.ID {
	t.Helper()
	list, err := s.List(context.Background(), proj, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []casckpt.ID
	for _, e := range list {
		ids = append(ids, e.ID)
	}
	return ids
}

// TestUndoNewestEndedTurn: without a turn, Undo takes the newest turn
// that ended, passing over an open one.
func TestUndoNewestEndedTurn(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	proj, r := fiveTurns(t, s)
	r.start("t6")
	res, err := s.Undo(ctx, proj, "", casckpt.UndoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Turn != "t5" || !slices.Equal(res.Reverted, []string{"c.txt"}) {
		t.Errorf("%+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "c.txt")); string(b) != lines(5, "t3") {
		t.Errorf("c.txt: %q", b)
	}
}

// TestUndoRefusals: an unknown turn, an open one, a project without an
// ended turn and a turn whose start snapshot was dropped are refused,
// changing nothing.
func TestUndoRefusals(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	proj, r := fiveTurns(t, s)
	r.start("open")
	other := filepath.Join(t.TempDir(), "other")
	testtree.Write(t, other, testtree.Tree{"f": {Data: "f"}})
	mustSnapshot(t, s, other, casckpt.SnapshotOptions{})
	turns, err := s.Turns(ctx, proj, "")
	if err != nil {
		t.Fatal(err)
	}
	t2 := turns[slices.IndexFunc(turns, func(tr casckpt.TurnInfo) bool { return tr.ID == "t2" })]
	if _, err := s.Forget(ctx, proj, casckpt.Ref(t2.Start.String())); err != nil {
		t.Fatal(err)
	}
	before, snaps := testtree.Read(t, proj), listIDs(t, s, proj)
	for _, tc := range []struct {
		dir, turn string
		want      error
		words     string
	}{
		{proj, "nope", casckpt.ErrNotFound, `turn "nope" not found`},
		{proj, "open", casckpt.ErrRefused, "still open"},
		{other, "", casckpt.ErrNotFound, "no ended turn"},
		{proj, "t2", casckpt.ErrRefused, "started on"},
	} {
		_, err := s.Undo(ctx, tc.dir, tc.turn, casckpt.UndoOptions{})
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.words) {
			t.Errorf("undo %q: %v, want %v saying %q", tc.turn, err, tc.want, tc.words)
		}
	}
	if d := testtree.Equal(before, testtree.Read(t, proj)); d != "" || !slices.Equal(snaps, listIDs(t, s, proj)) {
		t.Errorf("a refused undo changed something: %s", d)
	}
}

// TestUndoRefusesDamagedTurn: an undo that would write data damaged in
// the store is refused, naming the damaged snapshot, before anything is
// changed or snapshotted.
func TestUndoRefusesDamagedTurn(t *testing.T) {
	ctx := context.Background()
	casckpt.FilePacksOnly(t)                       // a pack file per snapshot
	s := openUnverifiedStore(t, casckpt.Options{}) // left damaged on purpose
	proj := filepath.Join(t.TempDir(), "proj")
	testtree.Write(t, proj, testtree.Tree{"keep.txt": {Data: "keep\n"}})
	proj, _ = filepath.EvalSymlinks(proj)
	mustSnapshot(t, s, proj, casckpt.SnapshotOptions{})
	before, _ := filepath.Glob(filepath.Join(s.Location(), "packs", "*.pack"))
	randomFile(t, filepath.Join(proj, "big.bin"), 50_000)
	r := &turnRecorder{t: t, s: s, proj: proj}
	start := r.start("t1")
	after, _ := filepath.Glob(filepath.Join(s.Location(), "packs", "*.pack"))
	edit(t, proj, nil, "big.bin")
	mustSnapshot(t, s, proj, casckpt.SnapshotOptions{Turn: "t1", EndTurn: true})
	for _, p := range after { // the pack with big.bin's chunk
		if !slices.Contains(before, p) {
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 0x55
			os.WriteFile(p, b, 0o600)
		}
	}
	edit(t, proj, testtree.Tree{"keep.txt": {Data: "edited\n"}})
	tree, snaps := testtree.Read(t, proj), listIDs(t, s, proj)
	_, err := s.Undo(ctx, proj, "t1", casckpt.UndoOptions{})
	if !errors.Is(err, casckpt.ErrDamaged) || !strings.Contains(err.Error(), start.ID.Short()) {
		t.Fatalf("undo over damaged data: %v", err)
	}
	if d := testtree.Equal(tree, testtree.Read(t, proj)); d != "" || !slices.Equal(snaps, listIDs(t, s, proj)) {
		t.Errorf("a refused undo changed something: %s", d)
	}
}

// TestUndosOfOneProjectRunOneAtATime: an undo started while another undo
// of the project is between its plan and its writes waits for it, and
// plans from what it left: both turns' changes to one file are reverted.
func TestUndosOfOneProjectRunOneAtATime(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{"notes.txt": {Data: lines()}})
	r := &turnRecorder{t, s, dir}
	r.turn("t1", testtree.Tree{"notes.txt": {Data: lines(2, "t1")}})
	r.turn("t2", testtree.Tree{"notes.txt": {Data: lines(2, "t1", 9, "t2")}})

	second := make(chan error, 1)
	waiting := make(chan struct{})
	casckpt.OnProjectLockWait(t, func() { close(waiting) })
	first, err := s.Undo(ctx, dir, "t1", casckpt.UndoOptions{BeforeApply: func() {
		go func() {
			res, err := s.Undo(ctx, dir, "t2", casckpt.UndoOptions{})
			if err == nil && len(res.Reverted)+len(res.Merged) != 1 {
				err = fmt.Errorf("the second undo reverted %q, merged %q", res.Reverted, res.Merged)
			}
			second <- err
		}()
		select {
		case <-waiting: // it waits for this undo: good
		case err := <-second: // it ran in this undo's window
			second <- err
		}
	}})
	if err != nil || len(first.Merged) != 1 {
		t.Fatalf("the first undo: %+v %v", first, err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if got := testtree.Read(t, dir)["notes.txt"].Data; got != lines() {
		t.Fatalf("after both undos notes.txt holds\n%s", got)
	}
}
