package casckpt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/packstore"
	"github.com/casckpt/casckpt/internal/testtree"
	"github.com/casckpt/casckpt/repo"
)

// killChildEnv makes TestKillTurnChild a child process taking one turn's
// snapshot: "STORE|DIR|N|DELAY|MODE" kills it at the N-th operation of its
// write path (0: none), at once when DELAY is negative, else DELAY
// microseconds after the operation ran; the operations are those of the
// pack files and the database's commits (index.CommitHook). MODE is the
// write path (killModes).
const killChildEnv = "CASCKPT_TEST_KILL_TURN"

// killTurnKeep is the keep rule of the turns, small so that every turn
// past the first few also drops a snapshot in its commit.
const killTurnKeep = 3

// TestKillTurnChild is the child of TestKillInsideTheTurnWritePath. It
// prints the snapshot's ID and the number of write-path operations it made.
func TestKillTurnChild(t *testing.T) {
	spec := os.Getenv(killChildEnv)
	if spec == "" {
		t.Skip("runs only as the child of TestKillInsideTheTurnWritePath")
	}
	parts := strings.Split(spec, "|")
	switch parts[4] {
	case "pack-file":
		repo.InlineMax = 0
	case "fold":
		foldAfterPacks = 1
	case "batched":
		repo.InlineMax = 0
		batchObjects, batchStamps = 2, 1
	}
	n, _ := strconv.ParseInt(parts[2], 10, 64)
	delay, _ := strconv.Atoi(parts[3])
	s, err := Open(parts[0], Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := &faults{n: n, kill: true, delay: time.Duration(delay) * time.Microsecond}
	f.install(s)
	r, err := s.Snapshot(context.Background(), parts[1], SnapshotOptions{Keep: killTurnKeep})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("snapshot %s %d\n", r.ID, f.calls.Load())
}

// turnChild runs TestKillTurnChild and returns the ID it printed and its
// count of operations, or killed when SIGKILL ended it.
func turnChild(t *testing.T, mode, store, dir string, n int64, delay int) (id cas.ID, ops int64, killed bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillTurnChild$", "-test.v")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%s|%d|%d|%s", killChildEnv, store, dir, n, delay, mode))
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return id, 0, true
		}
	}
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "snapshot "); ok && err == nil {
			var hexID string
			if _, err := fmt.Sscanf(rest, "%s %d", &hexID, &ops); err == nil {
				if id, err = cas.ParseID(hexID); err == nil {
					return id, ops, false
				}
			}
		}
	}
	t.Fatalf("turn child (kill at %d, delay %d): %v\n%s", n, delay, err, out)
	return id, 0, false
}

// TestKillInsideTheTurnWritePath kills a process taking a turn's snapshot
// (two files edited, one added every third turn, the keep rule dropping
// one snapshot) at every operation of its write path, both before the
// operation and at growing delays after it, which land inside and after
// the index's commit. After every kill the store verifies clean, every
// snapshot listed exports exactly the tree it was taken of, the last
// snapshot that completed is still listed, and the next turn succeeds.
// It does so on each write path (killModes).
func TestKillInsideTheTurnWritePath(t *testing.T) {
	for _, mode := range killModes {
		t.Run(mode, func(t *testing.T) { killEveryOperation(t, mode) })
	}
}

// killModes are the write paths of a turn: its pack inline, in the
// database's commit (the default); its pack in a pack file (a turn
// larger than repo.InlineMax); inline, then folded with the store's
// other inline packs into a pack file before the turn ends; a big
// snapshot's, its objects and stat cache committed ahead of its record,
// each in transactions of its own (commitAhead), here in parts of about 2
// objects and one directory.
var killModes = []string{"inline", "pack-file", "fold", "batched"}

// killEveryOperation is TestKillInsideTheTurnWritePath on one write path.
func killEveryOperation(t *testing.T, mode string) {
	store, dir := filepath.Join(t.TempDir(), "store"), t.TempDir()
	tree := testtree.Tree{}
	for i := range 40 {
		tree[fmt.Sprintf("src/f%02d.go", i)] = testtree.Entry{Data: fmt.Sprintf("package src\n// file %d\n", i)}
	}
	testtree.Write(t, dir, tree)
	k := &killTurns{t: t, store: store, dir: dir, tree: tree, byID: map[cas.ID]testtree.Tree{}}
	k.completed(turnChild(t, mode, store, dir, 0, 0))
	var ops int64
	for range killTurnKeep + 1 { // past the keep rule
		k.edit()
		_, ops, _ = k.completed(turnChild(t, mode, store, dir, 0, 0))
	}
	if ops == 0 {
		t.Fatal("a turn made no write-path operation")
	}
	kills := 0
	for n := int64(1); n <= ops; n++ {
		delays := []int{-1, 0, 300, 3000}
		if mode == "inline" { // one operation, the commit: kills through its writes and syncs
			delays = []int{-1, 0, 25, 50, 100, 200, 300, 500, 1000, 3000}
		}
		for _, delay := range delays {
			k.edit()
			id, _, killed := turnChild(t, mode, store, dir, n, delay)
			if killed {
				kills++
			} else { // this turn made fewer operations
				k.completed(id, 0, false)
			}
			k.check(fmt.Sprintf("killed at operation %d of %d, delay %dµs", n, ops, delay))
			k.edit()
			k.completed(turnChild(t, mode, store, dir, 0, 0))
		}
	}
	k.collectAndCheck()
	t.Logf("%d write-path operations per turn; %d kills, %d killed turns left a snapshot", ops, kills, k.survived)
	if kills == 0 {
		t.Fatal("no turn was killed")
	}
}

// killTurns is the state of TestKillInsideTheTurnWritePath: the project's
// tree now, and the tree of every snapshot taken.
type killTurns struct {
	t          *testing.T
	store, dir string
	tree       testtree.Tree
	byID       map[cas.ID]testtree.Tree // the tree of every snapshot taken
	step       int
	last       cas.ID // the last snapshot that completed
	survived   int    // killed turns whose snapshot was committed
}

// edit changes two files, and adds one every third step.
func (k *killTurns) edit() {
	k.step++
	changes := testtree.Tree{}
	for _, i := range []int{k.step % 40, (k.step * 7) % 40} {
		name := fmt.Sprintf("src/f%02d.go", i)
		changes[name] = testtree.Entry{Data: k.tree[name].Data + fmt.Sprintf("// step %d\n", k.step)}
	}
	if k.step%3 == 0 {
		changes[fmt.Sprintf("new/n%d.txt", k.step)] = testtree.Entry{Data: strconv.Itoa(k.step)}
	}
	testtree.Write(k.t, k.dir, changes)
	k.tree = testtree.Edit(k.tree, changes)
}

// completed records a turn that ran to its end.
func (k *killTurns) completed(id cas.ID, ops int64, killed bool) (cas.ID, int64, bool) {
	if killed {
		k.t.Fatal("a turn that nothing killed died of SIGKILL")
	}
	k.byID[id] = k.tree
	k.last = id
	return id, ops, killed
}

// check opens the store as the next process would and checks it.
func (k *killTurns) check(what string) {
	t := k.t
	t.Helper()
	ctx := context.Background()
	s, err := Open(k.store, Options{})
	if err != nil {
		t.Fatalf("%s: open: %v", what, err)
	}
	if v, err := s.Verify(ctx); err != nil || len(v.Damaged) > 0 {
		t.Fatalf("%s: verify: %+v %v", what, v.Damaged, err)
	}
	list, err := s.List(ctx, k.dir, 0)
	if err != nil {
		t.Fatalf("%s: list: %v", what, err)
	}
	lastListed := false
	for _, e := range list {
		want, known := k.byID[e.ID]
		if !known { // the killed turn committed before it died
			want = k.tree
			k.byID[e.ID] = want
			k.survived++
		}
		lastListed = lastListed || e.ID == k.last
		if diff := testtree.Equal(testtree.WithDirs(want), exportTree(t, s, k.dir, e.ID)); diff != "" {
			t.Fatalf("%s: snapshot %s does not export the tree it was taken of: %s", what, e.ID.Short(), diff)
		}
	}
	if !lastListed {
		t.Fatalf("%s: the last completed snapshot %s is gone", what, k.last.Short())
	}
}

// collectAndCheck collects garbage, which removes what the killed turns
// left, and checks that nothing else went.
func (k *killTurns) collectAndCheck() {
	t := k.t
	s, err := Open(k.store, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.GC(context.Background()); err != nil {
		t.Fatalf("gc after the kills: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(s.repo.PacksDir(), packstore.TempPrefix+"*")); len(left) > 0 {
		t.Fatalf("gc left temporary packs: %v", left)
	}
	k.check("after gc")
}

// exportTree is snapshot id of project dir as a tree.
func exportTree(t *testing.T, s *Store, dir string, id cas.ID) testtree.Tree {
	t.Helper()
	var buf bytes.Buffer
	if err := s.Export(context.Background(), dir, Ref(id.String()), &buf); err != nil {
		t.Fatalf("export %s: %v", id.Short(), err)
	}
	return testtree.ReadTar(t, &buf)
}
