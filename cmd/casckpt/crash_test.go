package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/casckpt/casckpt/internal/testtree"
)

// digest maps each file of a tree to a hash of its bytes, leaving out the
// temporary files a killed restore may leave (never captured).
func digest(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	files := testtree.ReadDigest(t, dir).Files()
	maps.DeleteFunc(files, func(p string, _ [32]byte) bool { return strings.HasPrefix(path.Base(p), ".casckpt-") })
	return files
}

// TestCrashLoop starts snapshot, restore, gc and prune and kills each with
// SIGKILL at a random moment, then checks that the store verifies clean,
// that a killed restore left every file old or new, that the next command
// needs no repair, and that every snapshot reported complete restores
// byte for byte.
func TestCrashLoop(t *testing.T) {
	iterations := 200
	if testing.Short() {
		iterations = 25
	}
	l := newCrashLoop(t)
	for i := range iterations {
		op := crashOps[l.rng.IntN(len(crashOps))]
		a, ok := l.prepare(op)
		if !ok {
			continue
		}
		out, done := l.run(i, a)
		l.check(i, a, out, done)
	}
	// One more snapshot, never killed, so that at least one is left to check
	// whatever the size cap dropped: the store still takes them after the
	// crashes.
	l.edit()
	final := digest(t, l.dir)
	var last struct {
		ID *string `json:"id"`
	}
	if err := json.Unmarshal(l.mustRun("snapshot", l.dir, "--json", "--keep", "8"), &last); err != nil || last.ID == nil {
		t.Fatalf("the last snapshot: %v", err)
	}
	l.complete = append(l.complete, knownSnapshot{*last.ID, final})
	checked := l.restoreComplete()
	t.Logf("%d iterations; killed %v, finished %v; %d snapshots reported complete, %d still listed and restored exactly",
		iterations, l.killed, l.finished, len(l.complete), checked)
	if checked == 0 {
		t.Fatal("no snapshot was left to check")
	}
	for _, op := range crashOps {
		if !testing.Short() && (l.killed[op] == 0 || l.finished[op] == 0) { // 25 short iterations may miss one
			t.Fatalf("%s was killed %d times and finished %d times: the loop must do both", op, l.killed[op], l.finished[op])
		}
	}
}

// crashOps are the operations TestCrashLoop runs and kills.
var crashOps = []string{"snapshot", "restore", "gc", "prune", "repair"}

// crashLoop is the state of TestCrashLoop: the binary and the project it
// works on, the random source every choice comes from (so a seed replays
// a run), the snapshots reported complete, and what each operation did.
type crashLoop struct {
	t        *testing.T
	bin      *binEnv
	dir      string
	rng      *rand.Rand
	complete []knownSnapshot
	// killed and finished count each operation's runs by how they ended.
	killed, finished map[string]int
	seen             map[string]bool // every snapshot ever listed
	// timed holds the durations of each operation's runs to the end, from
	// which killAt picks its moments.
	timed map[string][]time.Duration
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
	// the snapshot it restores.
	before, target map[string][32]byte
	listedBefore   []byte // for a repair, the listing before it
}

// newCrashLoop makes the project, with a first round of edits, and the
// loop's state.
func newCrashLoop(t *testing.T) *crashLoop {
	bin := newBinEnv(t)
	l := &crashLoop{t: t, bin: bin, dir: filepath.Join(bin.home, "project"), rng: rand.New(rand.NewPCG(5, 200)),
		killed: map[string]int{}, finished: map[string]int{}, seen: map[string]bool{}, timed: map[string][]time.Duration{}}
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
// in a few directories, and rewrites one of three 1 MiB random files.
func (l *crashLoop) edit() {
	rng, dir := l.rng, l.dir
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
// prune caps the store at 6 MiB.
func (l *crashLoop) prepare(op string) (a crashAttempt, ok bool) {
	a.op = op
	switch op {
	case "snapshot":
		l.edit()
		a.args = []string{"snapshot", l.dir, "--json", "--keep", "8"}
	case "restore":
		listing := l.mustRun("list", l.dir, "--json")
		var candidates []knownSnapshot
		for _, k := range l.complete {
			if listed(l.t, listing, k.id) {
				candidates = append(candidates, k)
			}
		}
		if len(candidates) == 0 {
			return a, false
		}
		k := candidates[l.rng.IntN(len(candidates))]
		a.before, a.target = digest(l.t, l.dir), k.tree
		a.args = []string{"restore", l.dir, k.id, "--json"}
	case "gc":
		// Give gc something to collect: forget the oldest snapshot.
		if len(l.complete) > 2 && l.rng.IntN(2) == 0 {
			l.casckpt("forget", l.dir, "@3").Run()
		}
		a.args = []string{"gc", "--json"}
	case "prune":
		a.args = []string{"prune", "--max-size-mb", "6", "--retention-days", "0", "--json"}
	case "repair":
		a.listedBefore = l.mustRun("list", l.dir, "--json")
		a.args = []string{"repair", "--json"}
	}
	a.tree = digest(l.t, l.dir)
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
		c.Process.Signal(syscall.SIGKILL)
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
// snapshot, and the store verifies clean without any repair.
func (l *crashLoop) check(i int, a crashAttempt, out []byte, done bool) {
	t := l.t
	if a.op == "snapshot" && done {
		var doc struct {
			ID *string `json:"id"`
		}
		if json.Unmarshal(out, &doc) == nil && doc.ID != nil {
			l.complete = append(l.complete, knownSnapshot{*doc.ID, a.tree})
		}
	}
	if a.op == "restore" && !done {
		now := digest(t, l.dir)
		for p, h := range now {
			if a.before[p] != h && a.target[p] != h {
				t.Fatalf("iteration %d: a killed restore left %s neither old nor new", i, p)
			}
		}
	}
	now := listedIDs(t, l.mustRun("list", l.dir, "--json"))
	if a.op == "repair" {
		l.checkRepair(i, listedIDs(t, a.listedBefore), now, done)
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
		left, _ := filepath.Glob(filepath.Join(l.dir, "*", ".casckpt-*"))
		top, _ := filepath.Glob(filepath.Join(l.dir, ".casckpt-*"))
		if left = append(left, top...); len(left) > 0 {
			t.Fatalf("a completed restore left temporary files: %v", left)
		}
		now := digest(t, l.dir)
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
