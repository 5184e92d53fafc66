package casckpt_test

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/testtree"
)

// randomFile writes n random (incompressible) bytes.
func randomFile(t *testing.T, p string, n int) {
	t.Helper()
	b := make([]byte, n)
	rand.Read(b)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustSnapshot(t *testing.T, s *casckpt.Store, dir string, opts casckpt.SnapshotOptions) casckpt.SnapshotResult {
	t.Helper()
	r, err := s.Snapshot(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func storeBytes(t *testing.T, s *casckpt.Store) int64 {
	t.Helper()
	n, err := casckpt.DirSize(s.Location())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestKeepAndGCReturnSpace(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{"src/a.go": {Data: "package a\n"}})
	for range 6 {
		randomFile(t, filepath.Join(dir, "blob"), 200_000)
		mustSnapshot(t, s, dir, casckpt.SnapshotOptions{Keep: 3})
	}
	list, _ := s.List(ctx, dir, 0)
	if len(list) != 3 {
		t.Fatalf("keep 3 left %d snapshots", len(list))
	}
	before := storeBytes(t, s)
	res, err := s.GC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	after := storeBytes(t, s)
	if res.ObjectsDeleted < 3 || res.BytesFreed < 3*190_000 || before-after < 3*190_000 {
		t.Fatalf("gc deleted %d objects, freed %d (store %d -> %d)", res.ObjectsDeleted, res.BytesFreed, before, after)
	}
	verifyClean(t, s)
	for _, e := range list {
		if _, err := s.Restore(ctx, dir, casckpt.Ref(e.ID.String()), casckpt.RestoreOptions{DryRun: true}); err != nil {
			t.Fatalf("restore after gc: %v", err)
		}
	}
	again, _ := s.GC(ctx)
	if again.ObjectsDeleted != 0 {
		t.Fatalf("second gc deleted %d objects", again.ObjectsDeleted)
	}
}

func TestIdenticalFilesAcrossProjectsStoredOnce(t *testing.T) {
	s := openStore(t)
	a, b := t.TempDir(), t.TempDir()
	randomFile(t, filepath.Join(a, "shared.bin"), 300_000)
	data, _ := os.ReadFile(filepath.Join(a, "shared.bin"))
	os.WriteFile(filepath.Join(b, "copy.bin"), data, 0o644)
	mustSnapshot(t, s, a, casckpt.SnapshotOptions{})
	r := mustSnapshot(t, s, b, casckpt.SnapshotOptions{})
	if r.Stored.RawBytes > 10_000 {
		t.Fatalf("second project stored %d new bytes for an identical file", r.Stored.RawBytes)
	}
}

func TestPruneOrphansAndStale(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	clock := now
	s := openStoreWith(t, casckpt.Options{Now: func() time.Time { return clock }})
	gone, stale, pinned, fresh := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	for _, d := range []string{gone, stale, pinned} {
		randomFile(t, filepath.Join(d, "f"), 100_000)
		mustSnapshot(t, s, d, casckpt.SnapshotOptions{})
	}
	if _, err := s.Pin(ctx, pinned, "@1"); err != nil {
		t.Fatal(err)
	}
	clock = now.Add(10 * 24 * time.Hour)
	randomFile(t, filepath.Join(fresh, "f"), 1000)
	mustSnapshot(t, s, fresh, casckpt.SnapshotOptions{})
	os.RemoveAll(gone)

	dry, err := s.Prune(ctx, casckpt.PruneOptions{StaleAfter: 7 * 24 * time.Hour, DryRun: true})
	if err != nil || dry.SnapshotsDropped != 2 || dry.BytesFreed != 0 {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	before := storeBytes(t, s)
	res, err := s.Prune(ctx, casckpt.PruneOptions{StaleAfter: 7 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if res.Scanned != 4 || res.DeletedOrphan != 1 || res.DeletedStale != 1 || res.SnapshotsDropped != 2 {
		t.Fatalf("prune: %+v", res)
	}
	if after := storeBytes(t, s); before-after < 190_000 {
		t.Fatalf("prune freed %d bytes on disk", before-after)
	}
	st, _ := s.Status(ctx)
	if len(st.Projects) != 2 {
		t.Fatalf("projects left: %+v", st.Projects)
	}
	verifyClean(t, s)
	auto, err := s.Prune(ctx, casckpt.PruneOptions{MinInterval: time.Hour})
	if err != nil || !auto.Skipped {
		t.Fatalf("prune --auto right after a prune: %+v %v", auto, err)
	}
}

// TestPruneWithNothingToDrop: a prune that no rule gives anything to drop
// still returns the space of snapshots forgotten or dropped by the keep
// rule since the last collection; with none, it only records that it ran
// (so prune --auto skips the next one) and reports the cap met.
func TestPruneWithNothingToDrop(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	dir := t.TempDir()
	for range 2 {
		randomFile(t, filepath.Join(dir, "f"), 100_000)
		mustSnapshot(t, s, dir, casckpt.SnapshotOptions{MaxStoreSize: -1})
	}
	if _, err := s.Forget(ctx, dir, "@1"); err != nil {
		t.Fatal(err)
	}
	before := storeBytes(t, s)
	res, err := s.Prune(ctx, casckpt.PruneOptions{MaxSize: 1 << 30})
	if err != nil || res.SnapshotsDropped != 0 || !res.CapMet {
		t.Fatalf("prune after a forget: %+v %v", res, err)
	}
	if after := storeBytes(t, s); before-after < 90_000 {
		t.Fatalf("prune after a forget freed %d bytes on disk, want the forgotten snapshot's 100,000", before-after)
	}
	idle, err := s.Prune(ctx, casckpt.PruneOptions{MaxSize: 1 << 30})
	if err != nil || idle.SnapshotsDropped != 0 || !idle.CapMet || idle.Scanned != 1 || idle.Skipped {
		t.Fatalf("prune with nothing to do: %+v %v", idle, err)
	}
	if auto, err := s.Prune(ctx, casckpt.PruneOptions{MinInterval: time.Hour}); err != nil || !auto.Skipped {
		t.Fatalf("prune --auto right after a prune with nothing to do: %+v %v", auto, err)
	}
	verifyClean(t, s)
}

func TestSizeCapIsMet(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	var dirs []string
	for range 3 {
		dirs = append(dirs, t.TempDir())
	}
	for round := range 4 {
		for _, d := range dirs {
			randomFile(t, filepath.Join(d, "blob"), 100_000)
			os.WriteFile(filepath.Join(d, "round"), []byte{byte(round)}, 0o644)
			mustSnapshot(t, s, d, casckpt.SnapshotOptions{MaxStoreSize: -1})
		}
	}
	capBytes := int64(700_000)
	res, err := s.Prune(ctx, casckpt.PruneOptions{MaxSize: capBytes})
	if err != nil || !res.CapMet {
		t.Fatalf("prune to cap: %+v %v", res, err)
	}
	if size := storeBytes(t, s); size > capBytes {
		t.Fatalf("store is %d bytes after a prune to %d", size, capBytes)
	}
	for _, d := range dirs {
		l, _ := s.List(ctx, d, 0)
		if len(l) == 0 {
			t.Fatalf("a project lost its last snapshot in the first phase")
		}
	}
	verifyClean(t, s)

	// At snapshot time: the new snapshot is never dropped and the cap holds.
	randomFile(t, filepath.Join(dirs[0], "blob"), 300_000)
	r := mustSnapshot(t, s, dirs[0], casckpt.SnapshotOptions{MaxStoreSize: capBytes})
	if size := storeBytes(t, s); size > capBytes {
		t.Fatalf("store is %d bytes after a capped snapshot", size)
	}
	l, _ := s.List(ctx, dirs[0], 0)
	if len(l) == 0 || l[0].ID != r.ID {
		t.Fatal("the snapshot just taken was dropped")
	}
	verifyClean(t, s)
}

func TestVerifyAndRestoreRefuseDamagedSnapshot(t *testing.T) {
	ctx := context.Background()
	s := openUnverifiedStore(t, casckpt.Options{}) // left damaged on purpose
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{"keep.txt": {Data: "intact"}})
	good := mustSnapshot(t, s, dir, casckpt.SnapshotOptions{})
	randomFile(t, filepath.Join(dir, "big.bin"), 50_000)
	bad := mustSnapshot(t, s, dir, casckpt.SnapshotOptions{})
	// Flip a byte in the newest pack: big.bin's chunk lives there alone
	// with the new trees (folded out of the database into a pack file).
	casckpt.FoldNow(t, s)
	packs, _ := filepath.Glob(filepath.Join(s.Location(), "packs", "*.pack"))
	var newest string
	var newestTime time.Time
	for _, p := range packs {
		st, _ := os.Stat(p)
		if st.ModTime().After(newestTime) || newest == "" {
			newest, newestTime = p, st.ModTime()
		}
	}
	b, _ := os.ReadFile(newest)
	b[len(b)/2] ^= 0x55
	os.WriteFile(newest, b, 0o600)

	v, err := s.Verify(ctx)
	if err != nil || len(v.Damaged) != 1 || v.Damaged[0].ID != bad.ID {
		t.Fatalf("verify: %+v %v", v, err)
	}
	os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("edited"), 0o644)
	os.Remove(filepath.Join(dir, "big.bin")) // so the damaged chunk must be written
	_, err = s.Restore(ctx, dir, casckpt.Ref(bad.ID.String()), casckpt.RestoreOptions{})
	if !errors.Is(err, casckpt.ErrDamaged) || !strings.Contains(err.Error(), good.ID.String()) {
		t.Fatalf("restore of a damaged snapshot: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "keep.txt")); string(got) != "edited" {
		t.Fatal("a refused restore changed the tree")
	}
	if _, err := s.Restore(ctx, dir, casckpt.Ref(good.ID.String()), casckpt.RestoreOptions{}); err != nil {
		t.Fatalf("restore of an intact snapshot beside a damaged one: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "keep.txt")); string(got) != "intact" {
		t.Fatal("restore of the intact snapshot did not restore")
	}
}
