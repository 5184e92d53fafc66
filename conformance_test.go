package casckpt_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
)

// conformanceCases are the use cases every backend runs the same way: a
// store in a directory, in an in-memory bucket whose clock the test sets,
// and in a bucket on versitygw whose clock the test advances (as restic's
// TestRepositoryWithBackend and kopia's blobtesting run one suite on
// every backend). No case sleeps: a bucket's grace period passes by
// backend.pastGrace. Each case gets backends of its own, new and empty.
var conformanceCases = []struct {
	name string
	run  func(t *testing.T, b backend)
}{
	{"gc", conformGC},
	{"prune", conformPrune},
	{"forget-pin-cap", conformForgetPinAndCap},
	{"cap", conformCap},
	{"pins", conformPins},
	{"drops-stay-dropped", conformDropsStayDropped},
	{"rebuild", conformRebuild},
	{"two-writers-and-gc", conformTwoWritersAndGC},
	{"dropped-elsewhere", conformDroppedElsewhere},
	{"lifecycle", conformLifecycle},
	{"sizes", conformSizes},
}

// TestConformance runs every conformance case on every backend, as
// TestConformance/<backend>/<case>.
func TestConformance(t *testing.T) {
	for i, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			for _, c := range conformanceCases {
				t.Run(c.name, func(t *testing.T) { c.run(t, backends()[i]) })
			}
		})
	}
}

// conformGC: gc (run again past the grace period on a bucket) deletes the
// objects of two forgotten snapshots that nothing needs, and the kept
// snapshot restores byte-exact from a new machine, which verifies clean.
// Another machine's snapshot of one forgotten tree between the two runs
// makes its data live again: it restores too.
func conformGC(t *testing.T, b backend) {
	ctx := context.Background()
	s := b.open(t, casckpt.Options{})
	dir, dirB := t.TempDir(), t.TempDir()
	var ids []casckpt.ID
	var trees []map[string][]byte
	for i, seed := range []string{"gone", "again", "kept"} {
		os.RemoveAll(dir)
		os.MkdirAll(dir, 0o755)
		trees = append(trees, writeFiles(t, dir, seed, 3))
		res, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{})
		if err != nil || !res.Created {
			t.Fatalf("snapshot %d: %+v %v", i, res, err)
		}
		ids = append(ids, res.ID)
	}
	for _, id := range ids[:2] {
		if _, err := s.Forget(ctx, dir, casckpt.Ref(id.String())); err != nil {
			t.Fatal(err)
		}
	}
	first, err := s.GC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range trees[1] {
		os.WriteFile(filepath.Join(dirB, name), data, 0o644)
	}
	again, err := b.open(t, casckpt.Options{}).Snapshot(ctx, dirB, casckpt.SnapshotOptions{})
	if err != nil || !again.Created {
		t.Fatalf("snapshot of a forgotten tree: %+v %v", again, err)
	}
	b.pastGrace()
	second, err := s.GC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if first.ObjectsDeleted+second.ObjectsDeleted == 0 || first.BytesFreed+second.BytesFreed <= 0 {
		t.Fatalf("gc deleted nothing: %+v then %+v", first, second)
	}
	fresh := b.open(t, casckpt.Options{})
	verifyClean(t, fresh)
	restoresExactly(t, fresh, dir, ids[2], trees[2])
	restoresExactly(t, fresh, dirB, again.ID, trees[1])
	if _, err := fresh.Restore(ctx, dir, casckpt.Ref(ids[0].String()), casckpt.RestoreOptions{}); err == nil {
		t.Fatalf("forgotten snapshot %s restores", ids[0].Short())
	}
}

// conformPrune: prune --dry-run reports the stale project's drop and
// changes nothing; prune drops it, records the run, and skips within the
// minimum interval by the store's clock, and runs again past it.
func conformPrune(t *testing.T, b backend) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s := b.open(t, casckpt.Options{Now: clock})
	dirA, dirB := t.TempDir(), t.TempDir()
	writeFiles(t, dirA, "a", 1)
	writeFiles(t, dirB, "b", 1)
	a, err := s.Snapshot(ctx, dirA, casckpt.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(10 * 24 * time.Hour)
	writeFiles(t, dirB, "b2", 1)
	if _, err := s.Snapshot(ctx, dirB, casckpt.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	rules := casckpt.PruneOptions{StaleAfter: 7 * 24 * time.Hour, KeepOrphans: true, MinInterval: time.Hour}
	dry := rules
	dry.DryRun = true
	res, err := s.Prune(ctx, dry)
	want := []casckpt.Drop{{Project: dirA, ID: a.ID, Rule: "stale"}}
	if err != nil || !slices.Equal(res.Drops, want) || res.DeletedStale != 1 || res.SnapshotsDropped != 1 {
		t.Fatalf("dry run: %+v %v, want the drop of %s", res, err, a.ID.Short())
	}
	if got := listIDs(t, b.open(t, casckpt.Options{Now: clock}), dirA); !slices.Equal(got, []casckpt.ID{a.ID}) {
		t.Fatalf("after the dry run a new open lists %v, want %s", got, a.ID.Short())
	}
	if res, err = s.Prune(ctx, rules); err != nil || res.Skipped || !slices.Equal(res.Drops, want) || res.DeletedStale != 1 {
		t.Fatalf("prune: %+v %v, want the drop of %s", res, err, a.ID.Short())
	}
	if got := listIDs(t, b.open(t, casckpt.Options{Now: clock}), dirA); len(got) != 0 {
		t.Fatalf("after prune a new open lists %v for the stale project", got)
	}
	now = now.Add(time.Hour - time.Second)
	if res, err = s.Prune(ctx, rules); err != nil || !res.Skipped || len(res.Drops) != 0 {
		t.Fatalf("prune within the minimum interval: %+v %v, want it skipped", res, err)
	}
	now = now.Add(2 * time.Second)
	if res, err = s.Prune(ctx, rules); err != nil || res.Skipped {
		t.Fatalf("prune past the minimum interval: %+v %v, want it run", res, err)
	}
}

// conformForgetPinAndCap: a forgotten snapshot stays forgotten and a
// pinned one survives prune's size cap, which drops every other snapshot
// of a cap of 1 byte and says it is not met; a new open of the store lists
// exactly the pinned snapshot.
func conformForgetPinAndCap(t *testing.T, b backend) {
	ctx := context.Background()
	s := b.open(t, casckpt.Options{})
	dir := t.TempDir()
	var ids []casckpt.ID
	for i := range 3 {
		writeFiles(t, dir, fmt.Sprint("v", i), 2)
		res, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{})
		if err != nil || !res.Created {
			t.Fatalf("snapshot %d: %+v %v", i, res, err)
		}
		ids = append(ids, res.ID)
	}
	if _, err := s.Pin(ctx, dir, casckpt.Ref(ids[0].String())); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Forget(ctx, dir, casckpt.Ref(ids[1].String())); err != nil {
		t.Fatal(err)
	}
	if got := listIDs(t, b.open(t, casckpt.Options{}), dir); !slices.Equal(got, []casckpt.ID{ids[2], ids[0]}) {
		t.Fatalf("after forget a new open lists %v, want %s and %s", got, ids[2].Short(), ids[0].Short())
	}
	res, err := s.Prune(ctx, casckpt.PruneOptions{MaxSize: 1})
	want := []casckpt.Drop{{Project: dir, ID: ids[2], Rule: "size-cap"}}
	if err != nil || res.CapMet || !slices.Equal(res.Drops, want) {
		t.Fatalf("prune to 1 byte: %+v %v, want the drop of %s and the cap not met", res, err, ids[2].Short())
	}
	fresh := b.open(t, casckpt.Options{})
	if got := listIDs(t, fresh, dir); !slices.Equal(got, []casckpt.ID{ids[0]}) {
		t.Fatalf("after prune a new open lists %v, want the pinned %s", got, ids[0].Short())
	}
	if _, err := fresh.Restore(ctx, dir, casckpt.Ref(ids[0].String()), casckpt.RestoreOptions{}); err != nil {
		t.Fatalf("restore of the pinned snapshot: %v", err)
	}
}

// capUnit is the size of the incompressible file each snapshot of the cap
// case adds: large next to a database and a commit.
const capUnit = 1 << 20

// conformCap: a snapshot that takes the store past its size cap drops the
// oldest unpinned snapshot first and keeps the pinned one, older still,
// and itself; a snapshot that would add more than half of the cap is
// refused, storing and dropping nothing. A new machine lists exactly
// what is kept, each kept snapshot restores byte-exact, and once gc has
// run (past the grace period on a bucket) the store's size is within the
// cap.
func conformCap(t *testing.T, b backend) {
	ctx := context.Background()
	s := b.open(t, casckpt.Options{})
	dir := t.TempDir()
	var taken []casckpt.ID
	trees := map[casckpt.ID]map[string][]byte{}
	take := func(limit int64) (casckpt.SnapshotResult, map[string][]byte, error) {
		p := filepath.Join(dir, "data.bin")
		randomFile(t, p, capUnit)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{MaxStoreSize: limit})
		return res, map[string][]byte{"data.bin": data}, err
	}
	for i := range 3 { // 3 units, no cap
		res, tree, err := take(-1)
		if err != nil || !res.Created || len(res.Dropped) != 0 {
			t.Fatalf("snapshot %d: %+v %v", i, res, err)
		}
		taken, trees[res.ID] = append(taken, res.ID), tree
	}
	if _, err := s.Pin(ctx, dir, casckpt.Ref(taken[0].String())); err != nil {
		t.Fatal(err)
	}
	const limit = 7 * capUnit / 2 // 4 units do not fit; 3 do
	res, tree, err := take(limit)
	if err != nil || !res.Created || !slices.Equal(res.Dropped, []casckpt.ID{taken[1]}) {
		t.Fatalf("snapshot over the cap: %+v %v, want the drop of the oldest unpinned, %s", res, err, taken[1].Short())
	}
	taken, trees[res.ID] = append(taken, res.ID), tree
	want := []casckpt.ID{taken[3], taken[2], taken[0]}
	randomFile(t, filepath.Join(dir, "more.bin"), 2*capUnit)
	if big, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{MaxStoreSize: limit}); !errors.Is(err, casckpt.ErrRefused) || big.Created {
		t.Fatalf("snapshot of more than half the cap: %+v %v, want it refused", big, err)
	}
	collectPastGrace(t, b, s) // a bucket returns the space past the grace period
	fresh := b.open(t, casckpt.Options{})
	if got := listIDs(t, fresh, dir); !slices.Equal(got, want) {
		t.Fatalf("a new machine lists %v, want %v", got, want)
	}
	if st, err := fresh.Status(ctx); err != nil || st.SizeBytes > limit || st.SizeBytes < 3*capUnit {
		t.Fatalf("the store holds %d bytes (%v), want the 3 kept units, within the cap of %d", st.SizeBytes, err, int64(limit))
	}
	verifyClean(t, fresh)
	for _, id := range want {
		restoresExactly(t, fresh, dir, id, trees[id])
	}
}

// conformPins: a pinned snapshot survives the keep rule, which drops the
// unpinned ones older than the newest; a new machine sees the pin; once
// unpinned there, the next snapshot's keep rule drops it.
func conformPins(t *testing.T, b backend) {
	ctx := context.Background()
	s := b.open(t, casckpt.Options{})
	dir := t.TempDir()
	var taken []casckpt.ID
	for i := range 3 {
		writeFiles(t, dir, fmt.Sprint("pin", i), 1)
		res, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{Keep: 1})
		if err != nil || !res.Created {
			t.Fatalf("snapshot %d: %+v %v", i, res, err)
		}
		taken = append(taken, res.ID)
		if i == 0 {
			if _, err := s.Pin(ctx, dir, casckpt.Ref(res.ID.String())); err != nil {
				t.Fatal(err)
			}
		}
	}
	other := b.open(t, casckpt.Options{})
	list, err := other.List(ctx, dir, 0)
	if err != nil || !slices.Equal(ids(list), []casckpt.ID{taken[2], taken[0]}) || !list[1].Pinned || list[0].Pinned {
		t.Fatalf("a new machine lists %+v %v, want %s and the pinned %s", list, err, taken[2].Short(), taken[0].Short())
	}
	if _, err := other.Unpin(ctx, dir, casckpt.Ref(taken[0].String())); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, "pin3", 1)
	last, err := b.open(t, casckpt.Options{}).Snapshot(ctx, dir, casckpt.SnapshotOptions{Keep: 1})
	if err != nil || !last.Created || !slices.Contains(last.Dropped, taken[0]) {
		t.Fatalf("snapshot after the unpin: %+v %v, want the drop of %s", last, err, taken[0].Short())
	}
	if got := listIDs(t, b.open(t, casckpt.Options{}), dir); !slices.Equal(got, []casckpt.ID{last.ID}) {
		t.Fatalf("after the unpin a new machine lists %v, want %s", got, last.ID.Short())
	}
}

// conformDropsStayDropped: a forgotten snapshot stays dropped for another
// machine that had listed it, once it syncs; after gc, for a new machine;
// and after a rebuild of the records from nothing. The others restore
// byte-exact, and the forgotten one does not restore.
func conformDropsStayDropped(t *testing.T, b backend) {
	ctx := context.Background()
	s := b.open(t, casckpt.Options{})
	dir := t.TempDir()
	var taken []casckpt.ID
	trees := map[casckpt.ID]map[string][]byte{}
	for i := range 3 {
		os.RemoveAll(dir)
		os.MkdirAll(dir, 0o755)
		tree := writeFiles(t, dir, fmt.Sprint("drop", i), 2)
		res, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{})
		if err != nil || !res.Created {
			t.Fatalf("snapshot %d: %+v %v", i, res, err)
		}
		taken, trees[res.ID] = append(taken, res.ID), tree
	}
	other := b.newMachine(t)
	if got := listIDs(t, other(casckpt.Options{}), dir); !slices.Equal(got, []casckpt.ID{taken[2], taken[1], taken[0]}) {
		t.Fatalf("another machine lists %v before the forget", got)
	}
	if _, err := s.Forget(ctx, dir, casckpt.Ref(taken[1].String())); err != nil {
		t.Fatal(err)
	}
	want := []casckpt.ID{taken[2], taken[0]}
	if got := listIDs(t, other(casckpt.Options{}), dir); !slices.Equal(got, want) {
		t.Fatalf("after the forget the other machine lists %v, want %v", got, want)
	}
	collectPastGrace(t, b, s)
	if got := listIDs(t, other(casckpt.Options{}), dir); !slices.Equal(got, want) {
		t.Fatalf("after gc the other machine lists %v, want %v", got, want)
	}
	if got := listIDs(t, b.open(t, casckpt.Options{}), dir); !slices.Equal(got, want) {
		t.Fatalf("after gc a new machine lists %v, want %v", got, want)
	}
	rebuilt := b.rebuild(t)
	if got := listIDs(t, rebuilt, dir); !slices.Equal(got, want) {
		t.Fatalf("after a rebuild the store lists %v, want %v", got, want)
	}
	if v := verifyClean(t, rebuilt); v.SnapshotsChecked != len(want) {
		t.Fatalf("verify checked %d snapshots, want %d", v.SnapshotsChecked, len(want))
	}
	for _, id := range want {
		restoresExactly(t, rebuilt, dir, id, trees[id])
	}
	if _, err := rebuilt.Restore(ctx, dir, casckpt.Ref(taken[1].String()), casckpt.RestoreOptions{}); err == nil {
		t.Fatalf("forgotten snapshot %s restores after a rebuild", taken[1].Short())
	}
}

// collectPastGrace runs gc with s until it has deleted what it can: once,
// then again past the grace period (a bucket's second phase).
func collectPastGrace(t *testing.T, b backend, s *casckpt.Store) casckpt.GCResult {
	t.Helper()
	var total casckpt.GCResult
	for range 2 {
		res, err := s.GC(context.Background())
		if err != nil {
			t.Fatalf("gc: %v", err)
		}
		total.ObjectsDeleted += res.ObjectsDeleted
		total.BytesFreed += res.BytesFreed
		b.pastGrace()
	}
	return total
}

// conformRebuild: records rebuilt from nothing bring back every
// snapshot of two projects and the turn, and no snapshot dropped and
// collected; on a journaled backend the pin and a drop not yet collected
// come back too, while a directory's rebuilt snapshots are unpinned and
// the uncollected drop comes back, as Repair documents. Every snapshot
// restores byte-exact and the store verifies clean.
func conformRebuild(t *testing.T, b backend) {
	ctx := context.Background()
	s := b.open(t, casckpt.Options{})
	dir, dir2 := t.TempDir(), t.TempDir()
	trees := map[casckpt.ID]map[string][]byte{}
	take := func(d, seed string, opts casckpt.SnapshotOptions) casckpt.ID {
		t.Helper()
		os.RemoveAll(d)
		os.MkdirAll(d, 0o755)
		tree := writeFiles(t, d, seed, 2)
		res, err := s.Snapshot(ctx, d, opts)
		if err != nil || !res.Created {
			t.Fatalf("snapshot of %s: %+v %v", seed, res, err)
		}
		trees[res.ID] = tree
		return res.ID
	}
	start := take(dir, "start", casckpt.SnapshotOptions{Session: "s1", Turn: "t1", Title: "a turn"})
	end := take(dir, "end", casckpt.SnapshotOptions{Session: "s1", Turn: "t1", EndTurn: true})
	collected := take(dir, "collected", casckpt.SnapshotOptions{})
	kept := take(dir, "kept", casckpt.SnapshotOptions{})
	other := take(dir2, "other", casckpt.SnapshotOptions{})
	if _, err := s.Pin(ctx, dir, casckpt.Ref(start.String())); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Forget(ctx, dir, casckpt.Ref(collected.String())); err != nil {
		t.Fatal(err)
	}
	collectPastGrace(t, b, s)
	uncollected := take(dir, "uncollected", casckpt.SnapshotOptions{})
	if _, err := s.Forget(ctx, dir, casckpt.Ref(uncollected.String())); err != nil {
		t.Fatal(err)
	}

	r := b.rebuild(t)
	want := []casckpt.ID{kept, end, start}
	if !b.journaled {
		want = slices.Insert(want, 0, uncollected)
	}
	list, err := r.List(ctx, dir, 0)
	if err != nil || !slices.Equal(ids(list), want) || list[len(list)-1].Pinned != b.journaled {
		t.Fatalf("rebuilt: %v %v (the oldest pinned: %v), want %v (pinned: %v)", ids(list), err, len(list) > 0 && list[len(list)-1].Pinned, want, b.journaled)
	}
	if got := listIDs(t, r, dir2); !slices.Equal(got, []casckpt.ID{other}) {
		t.Fatalf("rebuilt %s: %v, want %s", dir2, got, other.Short())
	}
	turns, err := r.Turns(ctx, dir, "")
	if err != nil || len(turns) != 1 || turns[0].ID != "t1" || turns[0].Session != "s1" || turns[0].Start != start || turns[0].End != end {
		t.Fatalf("rebuilt turns: %+v %v, want t1 of s1 from %s to %s", turns, err, start.Short(), end.Short())
	}
	if v := verifyClean(t, r); v.SnapshotsChecked != len(want)+1 {
		t.Fatalf("verify checked %d snapshots, want %d", v.SnapshotsChecked, len(want)+1)
	}
	for _, id := range want {
		restoresExactly(t, r, dir, id, trees[id])
	}
	restoresExactly(t, r, dir2, other, trees[other])
}

// conformTwoWritersAndGC: two machines snapshot projects of shared and
// own content under a keep rule, round by round, while a third runs gc
// in each round; between rounds the server's clock passes the grace
// period, so that gc's second phase deletes while the writers write. No
// snapshot is lost: afterwards a new machine lists exactly what the keep
// rule kept, every one restores byte-exact, the store verifies clean, and
// gc deleted data.
func conformTwoWritersAndGC(t *testing.T, b backend) {
	ctx := context.Background()
	writers := []machine{b.newMachine(t), b.newMachine(t)}
	collector := b.open(t, casckpt.Options{})
	dirs := []string{t.TempDir(), t.TempDir()}
	kept := make([][]casckpt.ID, len(writers)) // newest first
	trees := map[casckpt.ID]map[string][]byte{}
	var freed casckpt.GCResult
	for round := range 6 {
		results := make([]casckpt.SnapshotResult, len(writers))
		files := make([]map[string][]byte, len(writers))
		errs := make([]error, len(writers)+1)
		var wg sync.WaitGroup
		for m, open := range writers {
			s := open(casckpt.Options{}) // a command of its own: it syncs after the clock moved
			wg.Go(func() {
				files[m] = fleetFiles(t, dirs[m], "common", round/2, 3)
				maps.Copy(files[m], fleetFiles(t, dirs[m], fmt.Sprint("own", m), round, 2))
				results[m], errs[m] = s.Snapshot(ctx, dirs[m], casckpt.SnapshotOptions{Keep: 2})
			})
		}
		wg.Go(func() {
			res, err := collector.GC(ctx)
			if errors.Is(err, casckpt.ErrRefused) {
				err = nil // a writer's snapshot was collecting (on a bucket: it held gc's lease)
			}
			freed.ObjectsDeleted += res.ObjectsDeleted
			errs[len(writers)] = err
		})
		wg.Wait()
		for m, res := range results {
			if err := errs[m]; err != nil || !res.Created {
				t.Fatalf("round %d, writer %d: %+v %v", round, m, res, err)
			}
			trees[res.ID] = files[m]
			kept[m] = slices.DeleteFunc(slices.Insert(kept[m], 0, res.ID), func(id casckpt.ID) bool { return slices.Contains(res.Dropped, id) })
		}
		if err := errs[len(writers)]; err != nil {
			t.Fatalf("round %d, gc: %v", round, err)
		}
		b.pastGrace()
	}
	freed.ObjectsDeleted += collectPastGrace(t, b, collector).ObjectsDeleted
	if freed.ObjectsDeleted == 0 {
		t.Fatal("gc deleted nothing")
	}
	fresh := b.open(t, casckpt.Options{})
	if v := verifyClean(t, fresh); v.SnapshotsChecked != 4 || len(v.DamagedObjects) != 0 {
		t.Fatalf("verify checked %d snapshots (%+v), want the 4 kept", v.SnapshotsChecked, v)
	}
	for m, dir := range dirs {
		if got := listIDs(t, fresh, dir); !slices.Equal(got, kept[m]) || len(got) != 2 {
			t.Fatalf("writer %d: a new machine lists %v, want the 2 kept, %v", m, got, kept[m])
		}
		for _, id := range kept[m] {
			os.RemoveAll(dir)
			os.MkdirAll(dir, 0o755)
			restoresExactly(t, fresh, dir, id, trees[id])
		}
	}
}
