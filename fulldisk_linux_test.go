package casckpt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/casckpt/casckpt/internal/testtree"
)

// TestFullDiskSnapshotInParts takes the snapshot of a big tree, which
// commits its objects and its stat cache in transactions ahead of its
// record (CommitAheadPast makes the fault fixture's tree big), with the
// store on a small disk left 0 bytes free, then one step more each time,
// until the snapshot succeeds there: the packs, each part and the record
// meet a full disk in turn, and the database grows in real writes, not
// injected faults (TestIOErrorsAtEveryWrite injects EIO at each of its
// operations). Each failure is ENOSPC on one line and records nothing;
// every snapshot recorded before stays whole; with space back, a
// collection removes what the parts committed (objects no record names)
// and leaves the store whole, and the same snapshot succeeds.
func TestFullDiskSnapshotInParts(t *testing.T) {
	disk := testtree.SmallDisk(t, "16m")
	FilePacksOnly(t)
	CommitAheadPast(t, 2, 1)
	ctx := context.Background()
	trees := faultTrees()
	// C gets 600 small files in four directories: their index entries and
	// stat cache records grow the database past the pages it has free.
	many := testtree.Tree{}
	for i := range 600 {
		many[fmt.Sprintf("many/%d/%03d.txt", i%4, i)] = testtree.Entry{Data: fmt.Sprintf("file %d\n", i)}
	}
	trees["C"] = testtree.Edit(trees["C"], many)
	op := snapshotFaults(ctx)
	step := testtree.Size[int64](16<<10, 4<<10, 4<<10) // tmpfs allocates 4 KiB pages: finer steps repeat them
	store := filepath.Join(disk, "store")
	free, orphaned := int64(0), 0
	for ; ; free += step {
		if free > 8<<20 {
			t.Fatalf("the snapshot still fails with %d bytes free", free)
		}
		if err := os.RemoveAll(store); err != nil {
			t.Fatal(err)
		}
		fx := newFaultFixture(t, trees, store)
		filler := testtree.Fill(t, disk, free)
		err := op.run(fx)
		what := fmt.Sprintf("a full disk with %d bytes free", free)
		if err != nil && (!errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), "\n")) {
			t.Fatalf("%s: got %q, want ENOSPC on one line", what, err)
		}
		t.Logf("%s: %v", what, err)
		op.check(t, fx, err, what) // every snapshot whole; none recorded when it failed
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
		if err == nil {
			break
		}
		failed := err
		res, err := fx.s.GC(ctx)
		if err != nil {
			t.Fatalf("gc after %s: %v", what, err)
		}
		if res.ObjectsDeleted > 0 {
			orphaned++
			if !strings.Contains(failed.Error(), "no snapshot was recorded; the next gc removes what it stored") {
				t.Fatalf("%s: got %q, which does not say what the parts committed before it left", what, failed)
			}
		}
		fx.checkIntact(t)
		if err := op.run(fx); err != nil {
			t.Fatalf("after %s, with space back: %v", what, err)
		}
		op.again(t, fx)
	}
	if free == 0 {
		t.Fatal("the snapshot succeeded with no space free: the sweep tested nothing")
	}
	if orphaned == 0 {
		t.Fatal("no failure came after a part was committed: the parts never met the full disk")
	}
	t.Logf("failed with 0 to %d bytes free, %d times after committing parts, then succeeded", free-step, orphaned)
}
