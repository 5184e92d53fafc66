package casckpt_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/casckpt/casckpt"
)

// TestBucketStoresWriteNoInlinePacks: on a store in a bucket every small
// turn puts its pack in the bucket, where other machines read it, and
// none in the records' database, even a turn small enough to be inline
// in a store in a directory.
func TestBucketStoresWriteNoInlinePacks(t *testing.T) {
	for _, b := range backends() {
		if !b.journaled {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t, casckpt.Options{})
			dir := t.TempDir()
			for i := range 3 {
				before := len(b.packs(t))
				if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a // "+strconv.Itoa(i)+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				mustSnapshot(t, s, dir, casckpt.SnapshotOptions{})
				if after, inline := len(b.packs(t)), casckpt.InlinePacks(t, s); after <= before || inline != 0 {
					t.Fatalf("turn %d: %d packs in the bucket, %d before; %d inline packs, want 0", i, after, before, inline)
				}
			}
		})
	}
}
