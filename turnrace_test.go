package casckpt

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
)

// A snapshot that ends a turn another process started between its scan
// and its commit records the turn as it is at the commit, with a backup of
// that record, which a repair brings back: whether the other process
// recorded the same tree (the turn then ends on its snapshot) or another.
func TestTurnChangedBetweenScanAndCommit(t *testing.T) {
	for _, sameTree := range []bool{true, false} {
		ctx := context.Background()
		s, err := Open(filepath.Join(t.TempDir(), "store"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		write := func(data string) { os.WriteFile(filepath.Join(dir, "f"), []byte(data), 0o644) }
		write("1")
		if _, err := s.Snapshot(ctx, dir, SnapshotOptions{}); err != nil {
			t.Fatal(err)
		}
		write("2")
		// This snapshot plans to start and end turn t on its new snapshot...
		p, ss := scanPending(t, s, dir, SnapshotOptions{Turn: "t", EndTurn: true, Keep: -1})
		// ...while another starts t on a snapshot of its own.
		if !sameTree {
			write("3")
		}
		other, err := s.Snapshot(ctx, dir, SnapshotOptions{Session: "s", Turn: "t"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := ss.commitSnapshot(ctx, p)
		ss.End()
		end := res.ID
		if err != nil || res.Created == sameTree || res.TurnStarted || !res.TurnEnded || (sameTree && end != other.ID) {
			t.Fatalf("same tree %v: commit %+v %v", sameTree, res, err)
		}
		checkTurn(t, s, dir, other.ID, end)
		FoldNow(t, s) // a rebuild from the pack files cannot see inline packs
		os.Remove(s.repo.DBPath())
		if _, err := s.Repair(ctx); err != nil {
			t.Fatal(err)
		}
		checkTurn(t, s, dir, other.ID, end)
	}
}

// scanPending scans dir for a snapshot with opts, under a hold the
// caller ends after committing it.
func scanPending(t *testing.T, s *Store, dir string, opts SnapshotOptions) (*pendingSnapshot, *hold) {
	t.Helper()
	ss, err := s.begin(context.Background(), false, true)
	if err != nil {
		t.Fatal(err)
	}
	var p *pendingSnapshot
	err = ss.Read(func(v view) (err error) {
		p, err = ss.scanSnapshot(context.Background(), v, dir, opts, listing{}, nil)
		return err
	})
	if err != nil || p.turn == nil || !p.turn.started {
		t.Fatalf("plan: %+v %v", p, err)
	}
	return p, ss
}

// checkTurn checks that turn t of dir started on start and ended on end,
// in its record and in the backup the record names.
func checkTurn(t *testing.T, s *Store, dir string, start, end cas.ID) {
	t.Helper()
	ctx := context.Background()
	turns, err := s.Turns(ctx, dir, "")
	if err != nil || len(turns) != 1 || turns[0].Start != start || turns[0].End != end || turns[0].Session != "s" {
		t.Fatalf("the turn is %+v (%v); want started on %s, ended on %s", turns, err, start.Short(), end.Short())
	}
	var backup index.Turn
	err = s.repo.DB().View(func(tx *index.Tx) error {
		tr, _, err := tx.Turn(dir, "t")
		objects := cas.NewStore(s.repo.Packs(), tx.Objects())
		defer objects.Close()
		b, err2 := objects.Get(ctx, tr.BackupID)
		if err == nil {
			err = err2
		}
		if err == nil {
			backup, err = index.DecodeTurnBackup(b)
		}
		return err
	})
	if err != nil || backup.Start != start || backup.End != end || backup.Session != "s" {
		t.Fatalf("the turn's backup: %+v %v", backup, err)
	}
}
