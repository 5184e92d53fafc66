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
// It returns the project and the digest of the tree when the last turn
// began.
func w3Turns(b *testing.B, s *casckpt.Store) (dir string, lastStart map[string][32]byte) {
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
	}
	return dir, lastStart
}

// w3Op is one operation BenchmarkW3Undo times, in the library and
// through the command, after which the project is restored to the end of
// the last turn (untimed).
type w3Op struct {
	name string
	lib  func() error
	cmd  []string // the command's arguments after --store STORE
	base string   // the plain restore it is compared with
	want map[string][32]byte
}

// BenchmarkW3Undo: after W3's 40 turns, labelled as turns, the cost of
// undo (of the last turn, and of turn 30 with nine turns after it, one
// of whose files a later turn edited on the same line: a conflict) and
// of restore --safe, each against a plain restore of the same changes in
// the same run (the target: at most 1.5x). Each reports ms/op
// and x-restore, its time over the plain restore's; -cmd runs a process
// per operation. The last turn's undo and restore must leave the tree as
// the turn found it (exact).
func BenchmarkW3Undo(b *testing.B) {
	skipShort(b)
	ctx := context.Background()
	s := openStore(b)
	dir, lastStart := w3Turns(b, s)
	turns, err := s.Turns(ctx, dir, "")
	if err != nil || len(turns) < 20 || turns[0].ID != "t39" || turns[9].ID != "t30" || turns[9].Undoable() != nil {
		b.Fatalf("turns after W3: %d, %v", len(turns), err)
	}
	list, err := s.List(ctx, dir, 0)
	if err != nil || len(list) != 20 {
		b.Fatalf("%d snapshots kept: %v", len(list), err)
	}
	last, lastEnd, oldest := turns[0].Start.String(), turns[0].End.String(), list[len(list)-1].ID.String()
	restore := func(to string) func() error {
		return func() error {
			_, err := s.Restore(ctx, dir, casckpt.Ref(to), casckpt.RestoreOptions{})
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
	ops := []w3Op{
		{name: "restore/last-turn", lib: restore(last), cmd: []string{"restore", dir, last}, want: lastStart},
		{name: "undo/last-turn", lib: undo("t39"), cmd: []string{"undo", dir, "t39"}, base: "restore/last-turn", want: lastStart},
		{name: "undo/turn-30", lib: undo("t30"), cmd: []string{"undo", dir, "t30"}, base: "restore/last-turn"},
		{name: "restore/oldest", lib: restore(oldest), cmd: []string{"restore", dir, oldest}},
	}
	casckptBinary(b) // built before any timing
	// Once, so that every timed operation finds the store as the next
	// will: its tree already stored, the newest snapshot another tree.
	if err := restore(last)(); err != nil {
		b.Fatal(err)
	}
	back(b, s, dir, lastEnd)
	perOp := map[string]time.Duration{}
	for _, op := range ops {
		for _, viaCmd := range []bool{false, true} {
			name, base := op.name, op.base
			if viaCmd {
				name, base = name+"-cmd", base+"-cmd"
			}
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					if viaCmd {
						runBinary(b, append([]string{"--store", s.Dir()}, op.cmd...)...)
					} else if err := op.lib(); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					if op.want != nil && !maps.Equal(op.want, testtree.ReadDigest(b, dir).Files()) {
						b.Fatalf("%s did not leave the tree as the last turn found it", name)
					}
					back(b, s, dir, lastEnd)
					b.StartTimer()
				}
				perOp[name] = b.Elapsed() / time.Duration(b.N)
				b.ReportMetric(ms(perOp[name]), "ms/op")
				if d, ok := perOp[base]; ok && d > 0 {
					b.ReportMetric(float64(perOp[name])/float64(d), "x-restore")
				}
			})
		}
	}
}

// back restores the project to snapshot id.
func back(b *testing.B, s *casckpt.Store, dir, id string) {
	if _, err := s.Restore(context.Background(), dir, casckpt.Ref(id), casckpt.RestoreOptions{}); err != nil {
		b.Fatal(err)
	}
}
