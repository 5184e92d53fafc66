package casckpt_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/casckpt/casckpt"
)

// conformSizes: a snapshot's record keeps what it added to the store (its
// new objects only: a second snapshot that shares two files of three adds
// less), which list and status read back: on the machine that took it,
// after a repair of an intact database, and on a new machine of a bucket
// store (through the snapshot's commit). A rebuild from nothing keeps it
// on a bucket (the commits carry it) and knows it no more on a directory
// (the packs' backups are written before the packs' size is known): 0.
func conformSizes(t *testing.T, b backend) {
	ctx := context.Background()
	s := b.open(t, casckpt.Options{})
	dir := t.TempDir()
	first := writeFiles(t, dir, "sizes", 2)
	r1, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	extra := []byte("a third file, the second snapshot's only new object but its tree\n")
	if err := os.WriteFile(filepath.Join(dir, "f2.txt"), extra, 0o644); err != nil {
		t.Fatal(err)
	}
	r2, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{})
	if err != nil || !r1.Created || !r2.Created {
		t.Fatalf("snapshots: %+v %+v %v", r1, r2, err)
	}
	list, err := s.List(ctx, dir, 0)
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %+v %v", list, err)
	}
	firstBytes := int64(len(first["f0.txt"]) + len(first["f1.txt"]))
	newest, oldest := list[0], list[1]
	if oldest.Bytes != firstBytes || newest.Bytes != firstBytes+int64(len(extra)) {
		t.Fatalf("tree sizes %d and %d, want %d and %d", oldest.Bytes, newest.Bytes, firstBytes, firstBytes+int64(len(extra)))
	}
	if oldest.AddedRawBytes < firstBytes || newest.AddedRawBytes < int64(len(extra)) || newest.AddedRawBytes >= int64(len(first["f0.txt"])) {
		t.Fatalf("added raw bytes %d and %d: not the new files' (%d, %d)", oldest.AddedRawBytes, newest.AddedRawBytes, firstBytes, len(extra))
	}
	if newest.AddedBytes <= 0 || oldest.AddedBytes <= newest.AddedBytes || oldest.AddedBytes >= oldest.AddedRawBytes {
		t.Fatalf("added bytes %d and %d (raw %d)", oldest.AddedBytes, newest.AddedBytes, oldest.AddedRawBytes)
	}
	want := casckpt.ProjectStatus{Bytes: newest.Bytes, StoredBytes: oldest.AddedBytes + newest.AddedBytes,
		StoredRawBytes: oldest.AddedRawBytes + newest.AddedRawBytes}
	sizesAre(t, "the machine that took them", s, want)
	if _, err := s.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	sizesAre(t, "after a repair of an intact database", s, want)
	if b.journaled {
		sizesAre(t, "a new machine", b.open(t, casckpt.Options{}), want)
	} else {
		want.StoredBytes, want.StoredRawBytes = 0, 0 // unknown
	}
	sizesAre(t, "rebuilt from nothing", b.rebuild(t), want)
}

// sizesAre checks the sizes of the one project that s's status shows.
func sizesAre(t *testing.T, what string, s *casckpt.Store, want casckpt.ProjectStatus) {
	t.Helper()
	st, err := s.Status(context.Background())
	if err != nil || len(st.Projects) != 1 {
		t.Fatalf("%s: status %+v %v", what, st, err)
	}
	p := st.Projects[0]
	if p.Bytes != want.Bytes || p.StoredBytes != want.StoredBytes || p.StoredRawBytes != want.StoredRawBytes {
		t.Fatalf("%s: sizes %d, %d stored (%d raw), want %d, %d (%d)", what, p.Bytes, p.StoredBytes, p.StoredRawBytes, want.Bytes, want.StoredBytes, want.StoredRawBytes)
	}
}
