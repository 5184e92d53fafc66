package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/casckpt/casckpt/internal/osfs"
	"github.com/casckpt/casckpt/internal/testtree"
	"github.com/casckpt/casckpt/jsonapi"
)

// digest maps each file of the project to a hash of its bytes, leaving
// out the temporary files a killed restore may leave (never captured) and
// the entries it cannot read (see lockAway).
func (l *crashLoop) digest() map[string][32]byte {
	l.t.Helper()
	files := map[string][32]byte{}
	l.walk(func(full, rel string, d fs.DirEntry) {
		if d.Type().IsRegular() && !strings.HasPrefix(d.Name(), ".casckpt-") {
			b, err := os.ReadFile(full)
			if err != nil {
				l.t.Fatal(err)
			}
			files[rel] = sha256.Sum256(b)
		}
	})
	return files
}

// walk calls fn for each entry of the project, its path relative to it
// in slash form, but for the entries locked away (see lockAway).
func (l *crashLoop) walk(fn func(full, rel string, d fs.DirEntry)) {
	err := filepath.WalkDir(l.dir, func(full string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(l.dir, full)
		if _, ok := l.locked[filepath.ToSlash(rel)]; ok {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if err == nil {
			fn(full, filepath.ToSlash(rel), d)
		}
		return err
	})
	if err != nil {
		l.t.Fatal(err)
	}
}

// TestCrashLoop starts snapshot, restore, restore --safe, undo, gc, prune,
// policy and repair and kills each with SIGKILL at a random moment, then checks
// that the store verifies clean, that a killed restore, safe restore or
// undo left every file old or new and its project lock free, that a
// finished safe restore or undo
// changed the tree as its JSON says, that the next command needs no
// repair, and that every snapshot reported complete restores byte for
// byte. Snapshots start and end turns in turn, so that there are turns to
// undo and agents' changes for a safe restore to tell from others.
//
// It runs at least iterations runs (testtree.Size: more in the soak), and
// on until every operation has been both killed and finished, so that
// every size checks every operation both ways.
func TestCrashLoop(t *testing.T) {
	iterations := testtree.Size(50, 70, 250)
	l := newCrashLoop(t)
	l.loop(iterations, true)
}

// TestCrashLoopWithUnreadable is TestCrashLoop, fewer times, over a
// project that holds a file and a directory (with a file in it) that the
// user cannot read: after every operation, killed or finished, both are
// exactly as they were (bytes, modes and inodes: never written, deleted or
// replaced) and every finished snapshot names them in unreadable. The
// loop's other checks compare the rest of the tree, as no snapshot holds
// them. Run as nobody where the tests run as root.
func TestCrashLoopWithUnreadable(t *testing.T) {
	runsBinaryAsNobody(t)
	if !testtree.AsUnprivileged(t) {
		return
	}
	iterations := testtree.Size(12, 40, 100)
	l := newCrashLoop(t)
	l.lockAway()
	l.loop(iterations, false)
}

// loop runs at least iterations operations picked at random, killing them
// as killAt says and checking after each, then one more snapshot, never
// killed, and restores every snapshot reported complete. With everyOp it
// goes on until every operation has been both killed and finished (at
// most five times as long), and requires that.
func (l *crashLoop) loop(iterations int, everyOp bool) {
	t := l.t
	i := 0
	for ; i < iterations || (everyOp && !l.everyOpKilledAndFinished() && i < 5*iterations); i++ {
		op := crashOps[l.rng.IntN(len(crashOps))]
		a, ok := l.prepare(op)
		if !ok {
			l.skipped[op]++
			continue
		}
		out, done := l.run(i, a)
		l.check(i, a, out, done)
	}
	// One more snapshot, never killed, so that at least one is left to check
	// whatever the size cap dropped: the store still takes them after the
	// crashes.
	l.edit()
	final := l.digest()
	var last struct {
		ID *string `json:"id"`
	}
	out := l.mustRun("snapshot", l.dir, "--json", "--keep", "8")
	if err := json.Unmarshal(out, &last); err != nil || last.ID == nil {
		t.Fatalf("the last snapshot: %v", err)
	}
	l.checkUnreadable("the last snapshot", out)
	l.complete = append(l.complete, knownSnapshot{*last.ID, final})
	checked := l.restoreComplete()
	t.Logf("%d iterations; killed %v, finished %v, skipped %v; %d snapshots reported complete, %d still listed and restored exactly; "+
		"%d turns started, the finished undos reverted %d paths, merged %d and left %d alone, the finished safe restores "+
		"restored %d paths and kept %d (%d fell back to a whole restore)",
		i, l.killed, l.finished, l.skipped, len(l.complete), checked, l.turns, l.undos.reverted, l.undos.merged, l.undos.conflicts,
		l.safes.restored, l.safes.kept, l.safes.fellBack)
	if checked == 0 {
		t.Fatal("no snapshot was left to check")
	}
	if everyOp {
		for _, op := range crashOps {
			if l.killed[op] == 0 || l.finished[op] == 0 {
				t.Fatalf("%s was killed %d times and finished %d times: the loop must do both", op, l.killed[op], l.finished[op])
			}
		}
	}
}

// everyOpKilledAndFinished reports whether every operation has been both
// killed and run to the end.
func (l *crashLoop) everyOpKilledAndFinished() bool {
	for _, op := range crashOps {
		if l.killed[op] == 0 || l.finished[op] == 0 {
			return false
		}
	}
	return true
}

// crashOps are the operations TestCrashLoop runs and kills.
var crashOps = []string{"snapshot", "restore", "restore-safe", "undo", "gc", "prune", "policy", "repair"}

// crashLoop is the state of TestCrashLoop: the binary and the project it
// works on, the random source every choice comes from (so a seed replays
// a run), the snapshots reported complete, and what each operation did.
type crashLoop struct {
	t        *testing.T
	bin      *binEnv
	dir      string
	workflow string // a second project, a test workflow's (see preparePolicy)
	rng      *rand.Rand
	complete []knownSnapshot
	// killed and finished count each operation's runs by how they ended;
	// skipped counts those not run, having nothing to work on (no
	// snapshot to restore, no turn to undo).
	killed, finished, skipped map[string]int
	seen                      map[string]bool // every snapshot ever listed
	// timed holds the durations of each operation's runs to the end, from
	// which killAt picks its moments.
	timed map[string][]time.Duration
	// turns is the turn the snapshots start or end (ending says which).
	turns  int
	ending bool
	// locked holds the entries of the project the user cannot read, by
	// path (see lockAway); none in TestCrashLoop.
	locked map[string]lockedEntry
	// undos and safes sum up what the finished undos and safe restores
	// did: paths reverted, merged and left alone; paths written or
	// deleted, kept, and the safe restores that fell back to a whole one.
	undos struct{ reverted, merged, conflicts int }
	safes struct{ restored, kept, fellBack int }
}

// knownSnapshot is a snapshot reported complete and the digest of the
// project it captured.
type knownSnapshot struct {
	id   string
	tree map[string][32]byte
}

// crashAttempt is one run of an operation, as prepared: its arguments and
// what the checks after it compare with.
type crashAttempt struct {
	op   string
	args []string
	tree map[string][32]byte // the project just before the run
	// before and target are, for a restore, the project before it and
	// the snapshot it restores; for an undo or a safe restore, the project
	// before it and after it, as its dry run says.
	before, target map[string][32]byte
	listedBefore   []byte // for a repair, an undo or a safe restore, the listing before it
	// dry and safeDry are what the dry run of an undo or a safe restore
	// said.
	dry     jsonapi.Undo
	safeDry jsonapi.Restore
	// lifecycle is what a policy sets on the workflow project, and
	// lifecycleBefore its lifecycle before a policy or a prune; listedWorkflow is
	// how many snapshots of it were listed before a prune.
	lifecycle, lifecycleBefore string
	listedWorkflow             int
}

// newCrashLoop makes the project, with a first round of edits, and the
// loop's state.
func newCrashLoop(t *testing.T) *crashLoop {
	bin := newBinEnv(t)
	l := &crashLoop{t: t, bin: bin, dir: filepath.Join(bin.home, "project"), workflow: filepath.Join(bin.home, "workflow"), rng: rand.New(rand.NewPCG(5, 200)),
		killed: map[string]int{}, finished: map[string]int{}, skipped: map[string]int{}, turns: 1, seen: map[string]bool{}, timed: map[string][]time.Duration{}}
	os.MkdirAll(l.dir, 0o755)
	l.edit()
	return l
}

// casckpt is the command that runs casckpt with args on the store, not
// yet started.
func (l *crashLoop) casckpt(args ...string) *exec.Cmd {
	return l.bin.command(append([]string{"--store", l.bin.store()}, args...)...)
}

// mustRun runs casckpt with args to the end and returns its stdout; a
// failure fails the test.
func (l *crashLoop) mustRun(args ...string) []byte {
	l.t.Helper()
	var errb bytes.Buffer
	c := l.casckpt(args...)
	c.Stderr = &errb
	out, err := c.Output()
	if err != nil {
		l.t.Fatalf("casckpt %v after a crash: %v: %s", args, err, errb.String())
	}
	return out
}

// edit changes the project at random: writes or removes a few small files
// in a few directories, changes lines of text files (so that an undo has
// files to merge), and rewrites one of three 1 MiB random files.
func (l *crashLoop) edit() {
	rng, dir := l.rng, l.dir
	l.editLines()
	for range 1 + rng.IntN(4) {
		p := filepath.Join(dir, fmt.Sprintf("d%d/f%02d.txt", rng.IntN(5), rng.IntN(40)))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if rng.IntN(6) == 0 {
			os.Remove(p)
			continue
		}
		os.WriteFile(p, []byte(fmt.Sprintf("edit %d\n%s", rng.Uint64(), strings.Repeat("x", rng.IntN(5000)))), 0o644)
	}
	big := filepath.Join(dir, fmt.Sprintf("big%d.bin", rng.IntN(3)))
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	os.WriteFile(big, b, 0o644)
}

// editLines replaces a line of each of three text files of twelve lines
// (made when missing), or of none, at random.
func (l *crashLoop) editLines() {
	for n := range 3 {
		if l.rng.IntN(2) == 0 {
			continue
		}
		notes := filepath.Join(l.dir, fmt.Sprintf("notes%d.txt", n))
		b, err := os.ReadFile(notes)
		lines := strings.SplitAfter(string(b), "\n")
		if err != nil {
			lines = make([]string, 12)
			for i := range lines {
				lines[i] = fmt.Sprintf("line %d %d\n", i, l.rng.Uint64())
			}
		}
		lines[l.rng.IntN(12)] = fmt.Sprintf("edit %d\n", l.rng.Uint64())
		os.WriteFile(notes, []byte(strings.Join(lines, "")), 0o644)
	}
}

// killAt tells whether to kill this run of op, and when.
//
// Kills are calibrated from this machine's own runs, never from fixed
// durations: each operation's first run, and one in three after it, runs
// to the end and is timed; the others are killed at a uniformly random
// moment within 1.25 times the longest of its last timed runs, so kills
// land in every phase of it however fast or slow the machine is, and
// snapshots keep completing.
func (l *crashLoop) killAt(op string) (time.Duration, bool) {
	runs := l.timed[op]
	if len(runs) == 0 || l.rng.IntN(3) == 0 {
		return 0, false
	}
	longest := slices.Max(runs[max(0, len(runs)-5):])
	return time.Duration(l.rng.Int64N(int64(longest)*5/4 + 1)), true
}

// prepare makes ready a run of op: a snapshot edits the project first; a
// restore picks a complete snapshot still listed (ok is false when there
// is none); gc may first forget a snapshot, to have something to collect;
// prune caps the store at 6 MiB and applies the workflow's policy.
func (l *crashLoop) prepare(op string) (a crashAttempt, ok bool) {
	a.op = op
	switch op {
	case "snapshot":
		l.edit()
		a.args = l.snapshotArgs()
	case "restore":
		k, ok := l.pickComplete()
		if !ok {
			return a, false
		}
		a.before, a.target = l.digest(), k.tree
		a.args = []string{"restore", l.dir, k.id, "--json"}
	case "restore-safe":
		k, ok := l.pickComplete()
		if !ok {
			return a, false
		}
		a = l.prepareSafe(a, k)
	case "gc":
		// Give gc something to collect: forget the oldest snapshot.
		if len(l.complete) > 2 && l.rng.IntN(2) == 0 {
			l.casckpt("forget", l.dir, "@3").Run()
		}
		a.args = []string{"gc", "--json"}
	case "prune":
		a.args = []string{"prune", "--max-size-mb", "6", "--retention-days", "0", "--json"}
		a.lifecycleBefore, a.listedWorkflow = l.lifecycle(), len(listedIDs(l.t, l.mustRun("list", l.workflow, "--json")))
	case "policy":
		a = l.preparePolicy(a)
	case "repair":
		a.listedBefore = l.mustRun("list", l.dir, "--json")
		a.args = []string{"repair", "--json"}
	case "undo":
		if a, ok = l.prepareUndo(a); !ok {
			return a, false
		}
	}
	a.tree = l.digest()
	return a, true
}

// run starts a's command and kills it when killAt says so; a run that
// fails without a kill fails the test. It returns the command's stdout
// and whether it finished, counting and timing the run.
func (l *crashLoop) run(i int, a crashAttempt) (out []byte, done bool) {
	c := l.casckpt(a.args...)
	var stdout bytes.Buffer
	c.Stdout = &stdout
	if err := c.Start(); err != nil {
		l.t.Fatal(err)
	}
	started := time.Now()
	delay, kill := l.killAt(a.op)
	if kill {
		time.Sleep(delay)
		c.Process.Kill() // SIGKILL on Unix
	}
	err := c.Wait()
	if err != nil && !kill {
		l.t.Fatalf("iteration %d: casckpt %v failed without a kill: %v", i, a.args, err)
	}
	if !kill {
		l.timed[a.op] = append(l.timed[a.op], time.Since(started))
	}
	done = err == nil
	if done {
		l.finished[a.op]++
	} else {
		l.killed[a.op]++
	}
	return stdout.Bytes(), done
}

// check checks the store and the project after run i of a, finished
// (done) or killed: a finished snapshot is recorded as complete, a killed
// restore left every file old or new, a repair lost and brought back no
// snapshot, an undo is as checkUndo says, and the store verifies clean
// without any repair.
func (l *crashLoop) check(i int, a crashAttempt, out []byte, done bool) {
	t := l.t
	if a.op == "snapshot" && done {
		l.snapshotDone(out, a.tree)
	}
	if a.op == "restore" && !done {
		now := l.digest()
		for p, h := range now {
			if a.before[p] != h && a.target[p] != h {
				t.Fatalf("iteration %d: a killed restore left %s neither old nor new", i, p)
			}
		}
	}
	if (a.op == "restore" || a.op == "restore-safe" || a.op == "undo") && !done {
		l.checkProjectLockFree(i, a.op)
	}
	now := listedIDs(t, l.mustRun("list", l.dir, "--json"))
	if a.op == "repair" {
		l.checkRepair(i, listedIDs(t, a.listedBefore), now, done)
	}
	if a.op == "undo" || a.op == "restore-safe" {
		l.checkRewrite(i, a, out, done, now)
	}
	if a.op == "policy" || a.op == "prune" {
		l.checkWorkflow(i, a, done)
	}
	for _, id := range now {
		l.seen[id] = true
	}
	// The store is whole and usable again without any repair.
	var v struct {
		Damaged []any `json:"damaged"`
	}
	if err := json.Unmarshal(l.mustRun("verify", "--json"), &v); err != nil || len(v.Damaged) != 0 {
		t.Fatalf("iteration %d (%s killed): verify: %v %v", i, a.op, v.Damaged, err)
	}
	l.checkLocked(i, fmt.Sprintf("%v (finished %v)", a.args, done))
}

// checkProjectLockFree fails unless the project writer locks are free
// after run i of op was killed: the kernel released the dead process's,
// so the next restore or undo does not wait for it.
func (l *crashLoop) checkProjectLockFree(i int, op string) {
	locks, _ := filepath.Glob(filepath.Join(l.bin.store(), "locks", "project-*"))
	for _, p := range locks {
		f, err := os.Open(p)
		if err != nil {
			l.t.Fatal(err)
		}
		free, err := osfs.TryLock(f, true)
		f.Close()
		if err != nil || !free {
			l.t.Fatalf("iteration %d: the project lock %s is still held after %s was killed: %v", i, p, op, err)
		}
	}
}

// checkRepair checks the snapshots listed before (before) and after (now)
// run i of repair. Finished or killed, a repair loses no snapshot and
// brings back none that was dropped; it may add one whose commit a kill
// cut short (whole: its pack was synced before).
func (l *crashLoop) checkRepair(i int, before, now []string, done bool) {
	for _, id := range before {
		if !slices.Contains(now, id) {
			l.t.Fatalf("iteration %d: repair (finished %v) lost snapshot %s", i, done, id)
		}
	}
	for _, id := range now {
		if l.seen[id] && !slices.Contains(before, id) {
			l.t.Fatalf("iteration %d: repair (finished %v) brought back dropped snapshot %s", i, done, id)
		}
	}
}

// restoreComplete restores every snapshot reported complete and still
// listed, checks that it restores exactly what it captured and leaves no
// temporary file, and returns how many it checked.
func (l *crashLoop) restoreComplete() (checked int) {
	t := l.t
	listing := l.mustRun("list", l.dir, "--json")
	for _, k := range l.complete {
		if !listed(t, listing, k.id) {
			continue // dropped by keep or the size cap
		}
		l.mustRun("restore", l.dir, k.id)
		if left := l.tempFiles(); len(left) > 0 {
			t.Fatalf("a completed restore left temporary files: %v", left)
		}
		now := l.digest()
		if len(now) != len(k.tree) {
			t.Fatalf("restore of %s: %d files, want %d", k.id[:12], len(now), len(k.tree))
		}
		for p, h := range k.tree {
			if now[p] != h {
				t.Fatalf("restore of %s: %s differs", k.id[:12], p)
			}
		}
		checked++
	}
	return checked
}

// listedIDs returns the IDs of a list --json output, in order.
func listedIDs(t *testing.T, listing []byte) []string {
	t.Helper()
	var ids []string
	for _, s := range jsonOf[[]map[string]any](t, string(listing)) {
		ids = append(ids, s["id"].(string))
	}
	return ids
}

func listed(t *testing.T, listing []byte, id string) bool {
	var items []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(listing, &items); err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.ID == id {
			return true
		}
	}
	return false
}

// snapshotArgs are the arguments of the next snapshot, so there are turns
// to undo: it starts turn l.turns, or ends it. A snapshot that was killed
// is taken again with the same labels, by the next snapshot (so a turn
// killed before its start was recorded starts then, and one whose end may
// have been recorded ends again, later, as an agent that kept working in
// it would); one that finished moves on (see snapshotDone).
func (l *crashLoop) snapshotArgs() []string {
	args := []string{"snapshot", l.dir, "--json", "--keep", "8", "--turn", fmt.Sprintf("t%d", l.turns)}
	if l.ending {
		args = append(args, "--end-turn")
	}
	return args
}

// snapshotDone records a snapshot that finished, out its JSON and tree
// the project it captured: it is complete (when it stored something), and
// the turns move on: to the end of the turn it started, or to the start
// of the next one.
func (l *crashLoop) snapshotDone(out []byte, tree map[string][32]byte) {
	var doc struct {
		ID *string `json:"id"`
	}
	if json.Unmarshal(out, &doc) == nil && doc.ID != nil {
		l.complete = append(l.complete, knownSnapshot{*doc.ID, tree})
	}
	l.checkUnreadable(fmt.Sprintf("a snapshot of turn t%d", l.turns), out)
	if l.ending {
		l.turns++
	}
	l.ending = !l.ending
}

// prepareUndo makes ready an undo of a turn picked at random among those
// the store can undo, by the turn's ID or, for the newest ended turn, now
// and then by default. When there is none (kills and the size cap drop
// the snapshots of turns), it makes one: the snapshots that end the turn
// (and start and end the next) are taken, to the end, as the loop's
// snapshots are. ok is false if that still left none. The undo's dry run
// says what it will do; prepareUndo checks that against the turn's start
// and end snapshots and the tree, and works out the tree it must leave.
func (l *crashLoop) prepareUndo(a crashAttempt) (_ crashAttempt, ok bool) {
	t := l.t
	undoable, newest := l.undoableTurns()
	for i := 0; len(undoable) == 0 && i < 3; i++ {
		l.edit()
		tree := l.digest()
		l.snapshotDone(l.mustRun(l.snapshotArgs()...), tree)
		undoable, newest = l.undoableTurns()
	}
	if len(undoable) == 0 {
		return a, false
	}
	tr := undoable[l.rng.IntN(len(undoable))]
	a.args = []string{"undo", l.dir, tr.Turn, "--json"}
	if tr.Turn == newest && l.rng.IntN(2) == 0 {
		a.args = []string{"undo", l.dir, "--json"}
	}
	a.listedBefore = l.mustRun("list", l.dir, "--json")
	a.dry = jsonOf[jsonapi.Undo](t, string(l.mustRun(append(a.args, "--dry-run")...)))
	if a.dry.Turn != tr.Turn || !a.dry.DryRun || a.dry.PreUndoID != nil {
		t.Fatalf("undo %s --dry-run: %+v", tr.Turn, a.dry)
	}
	a.before = l.digest()
	a.target = l.undone(a.before, a.dry, l.export(tr.Start), l.export(*tr.End))
	return a, true
}

// undoableTurns returns the turns the store can undo, and the newest turn
// that ended and is not undone ("" when none is), which undo takes by
// default.
func (l *crashLoop) undoableTurns() (undoable []jsonapi.Turn, newest string) {
	for _, tr := range jsonOf[[]jsonapi.Turn](l.t, string(l.mustRun("turns", l.dir, "--json"))) {
		if tr.End != nil && tr.UndoneBy == nil && newest == "" {
			newest = tr.Turn
		}
		if tr.End != nil && len(tr.Dropped) == 0 && !tr.Damaged {
			undoable = append(undoable, tr)
		}
	}
	return undoable, newest
}

// export returns the tree of snapshot id.
func (l *crashLoop) export(id string) testtree.Tree {
	return testtree.ReadTar(l.t, bytes.NewReader(l.mustRun("export", l.dir, id, "-o", "-")))
}

// undone checks the plan of an undo (its dry run, dry) of the turn from
// start to end over the project now (digest before) and returns the
// project it must leave. By the contract, each file the turn changed is
// reverted, merged or left alone as a conflict; a reverted file is as the
// turn left it or already as it found it, and goes back to the latter; a
// merged one is in all three trees, and gets the turn's changes of lines
// undone and those since kept (the loop edits files line by line, so a
// clean merge is that).
func (l *crashLoop) undone(before map[string][32]byte, dry jsonapi.Undo, start, end testtree.Tree) map[string][32]byte {
	t := l.t
	decided := map[string]int{}
	for _, p := range slices.Concat(dry.Reverted, dry.Merged) {
		decided[string(p)]++
	}
	for _, c := range dry.Conflicts {
		decided[string(c.Path)]++
	}
	s, e := fileDigests(start), fileDigests(end)
	for p := range mergedKeys(s, e) {
		if state(s, p) != state(e, p) && decided[p] != 1 {
			t.Fatalf("undo of %s: the turn changed %s, which the plan names %d times: %+v", dry.Turn, p, decided[p], dry)
		}
	}
	after := maps.Clone(before)
	for _, jp := range dry.Reverted {
		p := string(jp)
		if w := state(before, p); w != state(e, p) && w != state(s, p) {
			t.Fatalf("undo of %s reverts %s, changed since the turn", dry.Turn, p)
		}
		if h, ok := s[p]; ok {
			after[p] = h
		} else {
			delete(after, p)
		}
	}
	for _, jp := range dry.Merged {
		p := string(jp)
		w, err := os.ReadFile(filepath.Join(l.dir, filepath.FromSlash(p)))
		merged, ok := mergeLines(end[p].Data, string(w), start[p].Data)
		if err != nil || !ok {
			t.Fatalf("undo of %s merges %s, which the loop did not edit line by line: %v", dry.Turn, p, err)
		}
		after[p] = sha256.Sum256([]byte(merged))
	}
	return after
}

// fileDigests maps each regular file of tree to the hash of its bytes.
func fileDigests(tree testtree.Tree) map[string][32]byte {
	out := map[string][32]byte{}
	for p, e := range tree {
		if !e.Dir && e.Link == "" {
			out[p] = sha256.Sum256([]byte(e.Data))
		}
	}
	return out
}

// mergedKeys returns the paths of all the digests given, each once.
func mergedKeys(ds ...map[string][32]byte) map[string]bool {
	out := map[string]bool{}
	for _, d := range ds {
		for p := range d {
			out[p] = true
		}
	}
	return out
}

// fileState is a path's state in a digest: absent, or the hash of a file.
type fileState struct {
	present bool
	hash    [32]byte
}

func state(d map[string][32]byte, p string) fileState {
	h, ok := d[p]
	return fileState{ok, h}
}

// mergeLines is the three-way merge of texts of the same number of lines
// whose sides changed different lines: line by line, ours where it
// changed base, else theirs. ok is false when the line counts differ.
func mergeLines(base, ours, theirs string) (string, bool) {
	b, o, th := strings.SplitAfter(base, "\n"), strings.SplitAfter(ours, "\n"), strings.SplitAfter(theirs, "\n")
	if len(b) != len(o) || len(b) != len(th) {
		return "", false
	}
	for i := range b {
		if o[i] == b[i] {
			o[i] = th[i]
		}
	}
	return strings.Join(o, ""), true
}

// checkRewrite checks the project and the store (listed: the snapshots
// now) after run i of a, an undo or a safe restore, finished (done, out
// its JSON) or killed. Killed, it left every file as it was or as a makes
// it; finished, it did what its dry run said (see finishedAsSaid), left
// exactly the tree worked out from it and no temporary file, and its
// snapshot of the tree before (then complete) holds that tree. Either way
// it dropped no snapshot.
func (l *crashLoop) checkRewrite(i int, a crashAttempt, out []byte, done bool, listed []string) {
	t := l.t
	for _, id := range listedIDs(t, a.listedBefore) {
		if !slices.Contains(listed, id) {
			t.Fatalf("iteration %d: %v (finished %v) lost snapshot %s", i, a.args, done, id)
		}
	}
	now := l.digest()
	for p := range mergedKeys(now, a.before, a.target) {
		if w := state(now, p); w != state(a.before, p) && w != state(a.target, p) {
			t.Fatalf("iteration %d: %v (finished %v) left %s neither old nor new", i, a.args, done, p)
		}
	}
	if !done {
		return
	}
	before := l.finishedAsSaid(i, a, out)
	if !maps.Equal(now, a.target) {
		t.Fatalf("iteration %d: %v left another tree than its dry run said", i, a.args)
	}
	if left := l.tempFiles(); len(left) > 0 {
		t.Fatalf("iteration %d: a finished %v left temporary files: %v", i, a.args, left)
	}
	if before != nil {
		l.complete = append(l.complete, knownSnapshot{*before, a.before})
	}
}

// finishedAsSaid fails unless the JSON out of finished run i of a (an
// undo or a safe restore) says what its dry run said, and returns the ID
// of its snapshot of the tree before (nil when it took none); it counts
// what it did.
func (l *crashLoop) finishedAsSaid(i int, a crashAttempt, out []byte) (before *string) {
	t := l.t
	if a.op == "undo" {
		res := jsonOf[jsonapi.Undo](t, string(out))
		if res.DryRun || fmt.Sprint(res.Turn, res.Reverted, res.Merged, res.Conflicts) != fmt.Sprint(a.dry.Turn, a.dry.Reverted, a.dry.Merged, a.dry.Conflicts) {
			t.Fatalf("iteration %d: undo did %+v, its dry run said %+v", i, res, a.dry)
		}
		l.undos.reverted += len(res.Reverted)
		l.undos.merged += len(res.Merged)
		l.undos.conflicts += len(res.Conflicts)
		return res.PreUndoID
	}
	res, dry := jsonOf[jsonapi.Restore](t, string(out)), a.safeDry
	if res.DryRun || res.Safe == nil || res.Kept == nil || fmt.Sprint(res.RestoredTo, res.Written, res.Deleted, res.Changes, *res.Safe, *res.Kept) !=
		fmt.Sprint(dry.RestoredTo, dry.Written, dry.Deleted, dry.Changes, *dry.Safe, *dry.Kept) {
		t.Fatalf("iteration %d: restore --safe did %+v, its dry run said %+v", i, res, dry)
	}
	l.safes.restored += len(res.Changes)
	l.safes.kept += len(*res.Kept)
	if !*res.Safe {
		l.safes.fellBack++
	}
	return res.PreRestoreID
}

// pickComplete picks at random a snapshot reported complete and still
// listed (ok is false when there is none).
func (l *crashLoop) pickComplete() (k knownSnapshot, ok bool) {
	listing := l.mustRun("list", l.dir, "--json")
	var candidates []knownSnapshot
	for _, k := range l.complete {
		if listed(l.t, listing, k.id) {
			candidates = append(candidates, k)
		}
	}
	if len(candidates) == 0 {
		return k, false
	}
	return candidates[l.rng.IntN(len(candidates))], true
}

// prepareSafe makes ready a safe restore of snapshot k. Its dry run says
// what it will do; prepareSafe checks that against the contract (each
// file that differs from k is restored or kept, a kept one left as it is,
// nothing kept when it fell back to a whole restore) and works out the
// tree it must leave: k's state at each path it restores.
func (l *crashLoop) prepareSafe(a crashAttempt, k knownSnapshot) crashAttempt {
	t := l.t
	a.args = []string{"restore", l.dir, k.id, "--safe", "--json"}
	a.listedBefore = l.mustRun("list", l.dir, "--json")
	dry := jsonOf[jsonapi.Restore](t, string(l.mustRun(append(a.args, "--dry-run")...)))
	if !dry.DryRun || dry.PreRestoreID != nil || dry.Safe == nil || dry.Kept == nil || (!*dry.Safe && len(*dry.Kept) > 0) {
		t.Fatalf("restore %s --safe --dry-run: %+v", k.id, dry)
	}
	a.safeDry, a.before = dry, l.digest()
	kept := map[string]bool{}
	holders := map[string]bool{} // directories kept for the kept paths they hold
	for _, kp := range *dry.Kept {
		kept[string(kp.Path)] = true
		holders[string(kp.Path)] = kp.Reason == "holds paths that are kept"
	}
	keeping := maps.Clone(kept) // the kept paths that keep what is below them
	maps.DeleteFunc(keeping, func(d string, _ bool) bool { return holders[d] })
	a.target = maps.Clone(a.before)
	for _, c := range dry.Changes {
		p := string(c.Path)
		h, ok := k.tree[p]
		switch {
		case c.Action == "write" && ok:
			a.target[p] = h
		case c.Action == "delete" && !ok:
			delete(a.target, p)
		default:
			t.Fatalf("restore %s --safe would %s %s, which the snapshot holds: %v", k.id, c.Action, p, ok)
		}
		// A directory kept because it holds kept paths does not keep the
		// others below it: they are restored (restorer.Safe's settleDirs).
		if kept[p] || keptAt(keeping, p) {
			t.Fatalf("restore %s --safe would both restore and keep %s", k.id, p)
		}
	}
	for p := range mergedKeys(a.before, k.tree) {
		if state(a.target, p) != state(k.tree, p) && !keptAt(kept, p) {
			t.Fatalf("restore %s --safe would neither restore nor keep %s (kept %v)", k.id, p, *dry.Kept)
		}
	}
	return a
}

// keptAt reports whether p or a directory above it is kept.
func keptAt(kept map[string]bool, p string) bool {
	for ; p != "."; p = path.Dir(p) {
		if kept[p] {
			return true
		}
	}
	return false
}

// tempFiles returns the temporary files of restores and undos in the
// project.
func (l *crashLoop) tempFiles() []string {
	var left []string
	l.walk(func(full, _ string, d fs.DirEntry) {
		if strings.HasPrefix(d.Name(), ".casckpt-") {
			left = append(left, full)
		}
	})
	return left
}

// lockedEntry is the state of an entry of the project the user cannot
// read, as lockAway left it: its mode and inode, and the digest of what
// it holds (read with the mode lifted for a moment).
type lockedEntry struct {
	mode fs.FileMode
	ino  uint64
	sums testtree.Digest
}

// lockAway adds to the project a file and a directory (holding two
// files, one in a subdirectory) with mode 000, which the user (not root)
// cannot read, and records their state for checkLocked. The loop's edits
// never touch them; restores, safe restores and undos must not either.
func (l *crashLoop) lockAway() {
	t := l.t
	b := make([]byte, 100<<10)
	for i := range b {
		b[i] = byte(i * 7)
	}
	must(t, os.WriteFile(filepath.Join(l.dir, "locked.bin"), b, 0o644))
	writeFiles(t, l.dir, map[string]string{"sealed/inner.txt": "inside\n", "sealed/sub/deep.txt": "deeper\n"})
	t.Cleanup(func() { os.Chmod(filepath.Join(l.dir, "sealed"), 0o755) })
	l.locked = map[string]lockedEntry{}
	for _, rel := range []string{"locked.bin", "sealed"} {
		full := filepath.Join(l.dir, rel)
		must(t, os.Chmod(full, 0))
		l.locked[rel] = l.lockedState(full)
	}
}

// lockedState reads the state of the entry at full, locked away.
func (l *crashLoop) lockedState(full string) lockedEntry {
	t := l.t
	t.Helper()
	info, err := os.Lstat(full)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := osfs.FromInfo(info)
	e := lockedEntry{mode: info.Mode(), ino: st.Ino}
	if e.mode.Perm() != 0 {
		return e // not as it was: checkLocked reports it
	}
	// Lift the lock for a moment to read what it holds; chmod changes
	// neither the bytes nor the modification times.
	must(t, os.Chmod(full, 0o500))
	e.sums = testtree.ReadDigest(t, full)
	must(t, os.Chmod(full, 0))
	return e
}

// checkLocked fails unless every entry lockAway locked away is exactly as
// it was after what (run i of an operation): not written, deleted or
// replaced.
func (l *crashLoop) checkLocked(i int, what string) {
	for rel, want := range l.locked {
		got := l.lockedState(filepath.Join(l.dir, rel))
		if got.mode != want.mode || got.ino != want.ino || !maps.Equal(got.sums, want.sums) {
			l.t.Fatalf("iteration %d: %s changed %s, which the user cannot read: mode %v inode %d, was mode %v inode %d; contents the same: %v",
				i, what, rel, got.mode, got.ino, want.mode, want.ino, maps.Equal(got.sums, want.sums))
		}
	}
}

// checkUnreadable fails unless out, the JSON of a finished snapshot,
// names in unreadable exactly the entries locked away.
func (l *crashLoop) checkUnreadable(what string, out []byte) {
	want := slices.Sorted(maps.Keys(l.locked))
	if got := jsonOf[jsonapi.Snapshot](l.t, string(out)).Unreadable; fmt.Sprint(got) != fmt.Sprint(want) {
		l.t.Fatalf("%s: unreadable %v, want %v", what, got, want)
	}
}
