//go:build linux

package bench

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/testtree"
)

// w3Turns runs W3's 40 turns (the same edits, keep 20) on a fresh copy of
// the project, each turn between a snapshot that starts it (--turn tN,
// on the tree the previous turn left) and one that ends it (--end-turn).
// It returns the project and the digests of the tree when the last turn
// began and when turn 20, whose end is the oldest snapshot kept, ended.
func w3Turns(b *testing.B, s *casckpt.Store) (dir string, lastStart, oldest map[string][32]byte) {
	dir = w3Project(b)
	settle()
	snap(b, s, dir, casckpt.SnapshotOptions{Reason: "initial", Keep: 20})
	rng := rand.New(rand.NewPCG(3, 40))
	for turn := range 40 {
		id := fmt.Sprint("t", turn)
		if turn == 39 {
			lastStart = testtree.ReadDigest(b, dir).Files()
		}
		snap(b, s, dir, casckpt.SnapshotOptions{Reason: id + " start", Turn: id, Keep: 20})
		turnEdit(b, rng, dir, turn)
		snap(b, s, dir, casckpt.SnapshotOptions{Reason: id + " end", Turn: id, EndTurn: true, Keep: 20})
		if turn == 20 {
			oldest = testtree.ReadDigest(b, dir).Files()
		}
	}
	return dir, lastStart, oldest
}

// w3Op is one operation BenchmarkW3Undo times, in the library and
// through the command, after which the project is restored to the end of
// the last turn (untimed).
type w3Op struct {
	name string
	lib  func() error
	cmd  []string            // the command's arguments after --store STORE
	want map[string][32]byte // the tree it leaves, if checked
	base *w3Op               // the plain restore it is compared with
}

// w3Bench is the project after W3's turns, its store and the end of its
// last turn, which every operation starts from.
type w3Bench struct {
	s            *casckpt.Store
	dir, lastEnd string
}

// run runs op once and, untimed, checks the tree it left and restores the
// end of the last turn; it returns how long op took.
func (w w3Bench) run(b *testing.B, op *w3Op, viaCmd bool) time.Duration {
	start := time.Now()
	if viaCmd {
		runBinary(b, append([]string{"--store", w.s.Location()}, op.cmd...)...)
	} else if err := op.lib(); err != nil {
		b.Fatal(err)
	}
	took := time.Since(start)
	b.StopTimer()
	defer b.StartTimer()
	if op.want != nil && !maps.Equal(op.want, testtree.ReadDigest(b, w.dir).Files()) {
		b.Fatalf("%s did not leave the tree it should", op.name)
	}
	if _, err := w.s.Restore(context.Background(), w.dir, casckpt.Ref(w.lastEnd), casckpt.RestoreOptions{}); err != nil {
		b.Fatal(err)
	}
	return took
}

// BenchmarkW3Undo: after W3's 40 turns, labelled as turns, the cost of
// undo (of the last turn, and of turn 30 with nine turns after it, one
// of whose files a later turn edited on the same line: a conflict) and
// of restore --safe (to the last turn's start, and to the oldest snapshot
// kept, 19 turns back), each against a plain restore of the same changes
// (the target: at most 1.5x). Each reports ms/op; x-restore is
// its time over that of the plain restore run right after it in every
// round (untimed), so that both see the same load. -cmd runs a process
// per operation. Every operation but the middle undo must leave the tree
// exactly as the plain restore does; a safe restore must keep nothing
// (every change was an agent's).
func BenchmarkW3Undo(b *testing.B) {
	skipShort(b)
	w, ops := w3Ops(b)
	casckptBinary(b) // built before any timing
	// Once, so that every timed operation finds the store as the next
	// will: its tree already stored, the newest snapshot another tree.
	w.run(b, ops[0], false)
	for _, op := range ops {
		for _, viaCmd := range []bool{false, true} {
			name := op.name
			if viaCmd {
				name += "-cmd"
			}
			b.Run(name, func(b *testing.B) {
				var base time.Duration
				for b.Loop() {
					w.run(b, op, viaCmd)
					if op.base != nil {
						b.StopTimer()
						base += w.run(b, op.base, viaCmd)
						b.StartTimer()
					}
				}
				b.ReportMetric(ms(b.Elapsed()/time.Duration(b.N)), "ms/op")
				if base > 0 {
					b.ReportMetric(float64(b.Elapsed())/float64(base), "x-restore")
				}
			})
		}
	}
}

// w3Ops runs W3's turns and returns the operations BenchmarkW3Undo times.
func w3Ops(b *testing.B) (w3Bench, []*w3Op) {
	ctx := context.Background()
	s := openStore(b)
	dir, lastStart, oldestTree := w3Turns(b, s)
	turns, err := s.Turns(ctx, dir, "")
	if err != nil || len(turns) < 20 || turns[0].ID != "t39" || turns[9].ID != "t30" || turns[9].Undoable() != nil {
		b.Fatalf("turns after W3: %d, %v", len(turns), err)
	}
	list, err := s.List(ctx, dir, 0)
	if err != nil || len(list) != 20 {
		b.Fatalf("%d snapshots kept: %v", len(list), err)
	}
	last, oldest := turns[0].Start.String(), list[len(list)-1].ID.String()
	restore := func(to string, safe bool) func() error {
		return func() error {
			res, err := s.Restore(ctx, dir, casckpt.Ref(to), casckpt.RestoreOptions{Safe: safe})
			if err == nil && safe && (!res.Safe || len(res.Kept) != 0) {
				err = fmt.Errorf("restore --safe %s: safe %v, kept %+v: every change was an agent's", to, res.Safe, res.Kept)
			}
			return err
		}
	}
	undo := func(turn string) func() error {
		return func() error {
			res, err := s.Undo(ctx, dir, turn, casckpt.UndoOptions{})
			if err == nil && len(res.Reverted) == 0 {
				err = fmt.Errorf("undo %s reverted nothing: %+v", turn, res)
			}
			return err
		}
	}
	restoreLast := &w3Op{name: "restore/last-turn", lib: restore(last, false), cmd: []string{"restore", dir, last}, want: lastStart}
	restoreOldest := &w3Op{name: "restore/oldest", lib: restore(oldest, false), cmd: []string{"restore", dir, oldest}, want: oldestTree}
	return w3Bench{s: s, dir: dir, lastEnd: turns[0].End.String()}, []*w3Op{
		restoreLast,
		{name: "undo/last-turn", lib: undo("t39"), cmd: []string{"undo", dir, "t39"}, want: lastStart, base: restoreLast},
		{name: "undo/turn-30", lib: undo("t30"), cmd: []string{"undo", dir, "t30"}, base: restoreLast},
		{name: "restore-safe/last-turn", lib: restore(last, true), cmd: []string{"restore", dir, last, "--safe"}, want: lastStart, base: restoreLast},
		restoreOldest,
		{name: "restore-safe/oldest", lib: restore(oldest, true), cmd: []string{"restore", dir, oldest, "--safe"}, want: oldestTree, base: restoreOldest},
	}
}
