package casckpt_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/manifest"
)

// turnOf returns turn id of the project in dir, failing the test when it
// is not listed.
func turnOf(t *testing.T, s *casckpt.Store, dir, id string) casckpt.TurnInfo {
	t.Helper()
	turns, err := s.Turns(context.Background(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range turns {
		if tr.ID == id {
			return tr
		}
	}
	t.Fatalf("turn %q is not listed: %+v", id, turns)
	return casckpt.TurnInfo{}
}

func TestTurnLifecycle(t *testing.T) {
	s := openStore(t)
	dir := t.TempDir()
	write := func(name, data string) { os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644) }
	write("a.txt", "one\n")
	start := mustSnapshot(t, s, dir, casckpt.SnapshotOptions{Session: "s1", Turn: "t1"})
	if !start.Created || !start.TurnStarted || start.TurnEnded {
		t.Fatalf("the first snapshot of a turn: %+v", start)
	}
	if tr := turnOf(t, s, dir, "t1"); !tr.Open() || tr.Start != start.ID || tr.Session != "s1" || tr.Undoable() == nil {
		t.Fatalf("an open turn: %+v", tr)
	}
	write("a.txt", "one\ntwo\nthree\n")
	write("b.txt", "b\n")
	mid := mustSnapshot(t, s, dir, casckpt.SnapshotOptions{Session: "s1", Turn: "t1"})
	if !mid.Created || mid.TurnStarted || mid.TurnEnded {
		t.Fatalf("a later snapshot of the turn: %+v", mid)
	}
	write("a.txt", "one\ntwo\n")
	end := mustSnapshot(t, s, dir, casckpt.SnapshotOptions{Session: "s1", Turn: "t1", EndTurn: true})
	tr := turnOf(t, s, dir, "t1")
	if !end.TurnEnded || tr.End != end.ID || tr.FilesChanged != 2 || tr.Insertions != 2 || tr.Deletions != 0 || tr.Undoable() != nil {
		t.Fatalf("the ended turn: %+v %+v", end, tr)
	}
	// A turn that starts and ends on an unchanged tree is still a turn.
	started := mustSnapshot(t, s, dir, casckpt.SnapshotOptions{Session: "s2", Turn: "t2"})
	ended := mustSnapshot(t, s, dir, casckpt.SnapshotOptions{Turn: "t2", EndTurn: true})
	tr = turnOf(t, s, dir, "t2")
	if started.Created || !started.TurnStarted || !ended.TurnEnded || tr.Start != end.ID || tr.End != end.ID || tr.Session != "s2" || tr.FilesChanged != 0 {
		t.Fatalf("a turn on an unchanged tree: %+v %+v %+v", started, ended, tr)
	}
	// Ending a turn that never started starts and ends it on one snapshot.
	write("c.txt", "c\n")
	only := mustSnapshot(t, s, dir, casckpt.SnapshotOptions{Turn: "t3", EndTurn: true})
	if tr := turnOf(t, s, dir, "t3"); !only.TurnStarted || !only.TurnEnded || tr.Start != only.ID || tr.End != only.ID {
		t.Fatalf("a turn ended before it started: %+v", tr)
	}
	// Labels go on new snapshots; a session lists its own.
	list, err := s.ListSession(context.Background(), dir, "s1", 0)
	if err != nil || len(list) != 3 || list[0].ID != end.ID || list[0].Turn != "t1" || list[0].Session != "s1" || list[2].ID != start.ID {
		t.Fatalf("the snapshots of session s1: %+v %v", list, err)
	}
	if list[1].FilesChanged != 2 {
		t.Fatalf("a session's snapshot compares with the one before it: %+v", list[1])
	}
	if turns, _ := s.Turns(context.Background(), dir, "s2"); len(turns) != 1 || turns[0].ID != "t2" {
		t.Fatalf("the turns of session s2: %+v", turns)
	}
}

func TestTurnLabelsChecked(t *testing.T) {
	s := openStore(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o644)
	for _, opts := range []casckpt.SnapshotOptions{
		{Turn: "a\nb"}, {Session: "nul\x00"}, {Turn: strings.Repeat("x", casckpt.MaxLabel+1)}, {Turn: "\xff"}, {EndTurn: true},
	} {
		if _, err := s.Snapshot(context.Background(), dir, opts); !errors.Is(err, casckpt.ErrBadLabel) {
			t.Errorf("%+q: %v", opts.Turn+opts.Session, err)
		}
	}
	if err := casckpt.CheckLabel(strings.Repeat("é", casckpt.MaxLabel/2)); err != nil {
		t.Fatal(err)
	}
}

func TestTurnsGoWithTheirSnapshots(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	dir := t.TempDir()
	take := func(data string, opts casckpt.SnapshotOptions) casckpt.SnapshotResult {
		os.WriteFile(filepath.Join(dir, "f.txt"), []byte(data), 0o644)
		return mustSnapshot(t, s, dir, opts)
	}
	a := take("1\n", casckpt.SnapshotOptions{Turn: "t1"})
	take("2\n", casckpt.SnapshotOptions{Turn: "t1", EndTurn: true})
	take("3\n", casckpt.SnapshotOptions{Turn: "t2"})
	if _, err := s.Forget(ctx, dir, casckpt.Ref(a.ID.String())); err != nil {
		t.Fatal(err)
	}
	tr := turnOf(t, s, dir, "t1")
	if err := tr.Undoable(); !tr.StartDropped || tr.EndDropped || err == nil || !strings.Contains(err.Error(), a.ID.Short()) {
		t.Fatalf("a turn whose start was dropped: %+v %v", tr, err)
	}
	// keep 1 drops the end of t1 and the start of the open t2: both go.
	take("4\n", casckpt.SnapshotOptions{Keep: 1, Turn: "t3"})
	turns, err := s.Turns(ctx, dir, "")
	if err != nil || len(turns) != 1 || turns[0].ID != "t3" {
		t.Fatalf("turns left after keep 1: %+v %v", turns, err)
	}
	// gc keeps the backup of the turn left, so a repair rebuilds it.
	if _, err := s.GC(ctx); err != nil {
		t.Fatal(err)
	}
	casckpt.FoldNow(t, s) // a rebuild from the pack files cannot see inline packs
	os.Remove(filepath.Join(s.Location(), "casckpt.db"))
	if res, err := s.Repair(ctx); err != nil || res.Turns != 1 {
		t.Fatalf("repair: %+v %v", res, err)
	}
	if turns, _ := s.Turns(ctx, dir, ""); len(turns) != 1 || turns[0].ID != "t3" || !turns[0].Open() {
		t.Fatalf("turns after repair: %+v", turns)
	}
}

func TestRepairRebuildsTurns(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := openStoreWith(t, casckpt.Options{Now: func() time.Time { now = now.Add(time.Second); return now }})
	dir, other := t.TempDir(), t.TempDir()
	take := func(dir, data string, opts casckpt.SnapshotOptions) {
		os.WriteFile(filepath.Join(dir, "f.txt"), []byte(data), 0o644)
		mustSnapshot(t, s, dir, opts)
	}
	take(dir, "1\n", casckpt.SnapshotOptions{Session: "s", Turn: "ended"})
	take(dir, "2\n", casckpt.SnapshotOptions{Session: "s", Turn: "ended", EndTurn: true})
	take(dir, "2\n", casckpt.SnapshotOptions{Session: "s", Turn: "ended", EndTurn: true}) // no change: same end
	take(dir, "3\n", casckpt.SnapshotOptions{Turn: "open"})
	take(dir, "4\n", casckpt.SnapshotOptions{Turn: "forgotten", EndTurn: true})
	take(other, "x\n", casckpt.SnapshotOptions{Turn: "elsewhere"})
	if _, err := s.Forget(ctx, dir, "@1"); err != nil { // the only snapshot of "forgotten"
		t.Fatal(err)
	}
	before := map[string][]casckpt.TurnInfo{}
	for _, d := range []string{dir, other} {
		before[d], _ = s.Turns(ctx, d, "")
	}
	if len(before[dir]) != 2 || len(before[other]) != 1 {
		t.Fatalf("turns before: %+v", before)
	}
	// With the old database's tombstones, the forgotten turn stays gone.
	if res, err := s.Repair(ctx); err != nil || res.Turns != 3 {
		t.Fatalf("repair: %+v %v", res, err)
	}
	sameTurns(t, s, dir, before[dir])
	sameTurns(t, s, other, before[other])
	// Without a database, every turn comes back from its backup (the
	// forgotten one too, with its snapshot: their tombstones are lost).
	casckpt.FoldNow(t, s) // a rebuild from the pack files cannot see inline packs
	os.Remove(filepath.Join(s.Location(), "casckpt.db"))
	if res, err := s.Repair(ctx); err != nil || res.Turns != 4 || res.Snapshots != 5 {
		t.Fatalf("repair: %+v %v", res, err)
	}
	if _, err := s.Forget(ctx, dir, "@1"); err != nil {
		t.Fatal(err)
	}
	sameTurns(t, s, dir, before[dir])
	sameTurns(t, s, other, before[other])
}

// sameTurns fails the test unless the project in dir has the turns want.
func sameTurns(t *testing.T, s *casckpt.Store, dir string, want []casckpt.TurnInfo) {
	t.Helper()
	got, err := s.Turns(context.Background(), dir, "")
	if err != nil || len(got) != len(want) {
		t.Fatalf("turns %+v (%v), want %+v", got, err, want)
	}
	for i := range got {
		a, b := got[i], want[i]
		if a.ID != b.ID || a.Session != b.Session || a.Start != b.Start || a.End != b.End || !a.Started.Equal(b.Started) || !a.Ended.Equal(b.Ended) || a.Insertions != b.Insertions {
			t.Fatalf("turn %d: %+v, want %+v", i, a, b)
		}
	}
}

func TestPruneTakesAGoneProjectsTurns(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	gone, kept := filepath.Join(t.TempDir(), "gone"), t.TempDir()
	os.Mkdir(gone, 0o755)
	for _, dir := range []string{gone, kept} {
		os.WriteFile(filepath.Join(dir, "f"), []byte(dir), 0o644)
		mustSnapshot(t, s, dir, casckpt.SnapshotOptions{Turn: "t", EndTurn: true})
	}
	os.RemoveAll(gone)
	if res, err := s.Prune(ctx, casckpt.PruneOptions{}); err != nil || res.DeletedOrphan != 1 {
		t.Fatalf("prune: %+v %v", res, err)
	}
	if turns, _ := s.Turns(ctx, gone, ""); len(turns) != 0 {
		t.Fatalf("a pruned project's turns: %+v", turns)
	}
	// Nor does a repair bring them back; the other project's stay.
	if res, err := s.Repair(ctx); err != nil || res.Turns != 1 {
		t.Fatalf("repair: %+v %v", res, err)
	}
	if turns, _ := s.Turns(ctx, kept, ""); len(turns) != 1 {
		t.Fatalf("the kept project's turns: %+v", turns)
	}
}

// TestVerifyChecksTurnBackups: a turn whose record backup is gone from the
// store is reported by verify, against the turn's start snapshot, since a
// repair could not rebuild the turn.
func TestVerifyChecksTurnBackups(t *testing.T) {
	ctx := context.Background()
	s := openUnverifiedStore(t, casckpt.Options{})
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644)
	start, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{Turn: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := s.Verify(ctx); err != nil || len(res.Damaged) != 0 {
		t.Fatalf("verify of a whole store: %+v %v", res, err)
	}
	db := index.Open(filepath.Join(s.Location(), "casckpt.db"), index.Options{Timeout: time.Second, Chunker: manifest.ChunkerName})
	err = db.Update(func(tx *index.Tx) error {
		tr, _, err := tx.Turn(start.Project, "t1")
		if err != nil {
			return err
		}
		return tx.Objects().DeleteObject(tr.BackupID)
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Verify(ctx)
	if err != nil || len(res.Damaged) != 1 || res.Damaged[0].ID != start.ID || !strings.Contains(res.Damaged[0].Reason, `turn "t1"`) {
		t.Fatalf("verify of a store that lost a turn's backup: %+v %v", res, err)
	}
}

func TestTurnTitle(t *testing.T) {
	long := strings.Repeat("é", 130)
	for in, want := range map[string]string{
		"fix the bug":                     "fix the bug",
		"\n  \n\tfirst line\nsecond line": "first line",
		"a\x07b\x1b[31mc\u200bd":          "ab[31mcd",
		"tab\there":                       "tab here",
		long:                              strings.Repeat("é", casckpt.MaxTitle),
		"bad \xff utf-8":                  "bad  utf-8",
		"":                                "",
		"\n\n":                            "",
	} {
		if got := casckpt.TurnTitle(in); got != want {
			t.Errorf("TurnTitle(%q) = %q, want %q", in, got, want)
		}
	}
}
