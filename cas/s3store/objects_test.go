package s3store_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"slices"
	"testing"

	"github.com/casckpt/casckpt/internal/s3test"
)

// TestSmallObjects: the objects beside the packs are put once and never
// overwritten, read, listed in key order after a key, and deleted; the
// keys of packs are out of their reach.
func TestSmallObjects(t *testing.T) {
	srv := s3test.Start(t)
	s := open(t, config(srv))
	ctx := context.Background()
	for _, k := range []string{"commits/2", "commits/1", "commits/3", "dropped/1"} {
		if err := s.PutNew(ctx, k, []byte(k)); err != nil {
			t.Fatalf("put %s: %v", k, err)
		}
	}
	if err := s.PutNew(ctx, "commits/2", []byte("other")); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second put of a key: %v", err)
	}
	if err := s.PutNew(ctx, "commits/2", []byte("commits/2")); err != nil {
		t.Fatalf("a put of the same bytes again (a retry): %v", err)
	}
	if b, err := s.Get(ctx, "commits/2"); err != nil || string(b) != "commits/2" {
		t.Fatalf("get: %q %v", b, err)
	}
	if _, err := s.Get(ctx, "commits/9"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("get of a missing key: %v", err)
	}
	var keys []string
	if err := s.ListAfter(ctx, "commits/", "commits/1", func(k string) error { keys = append(keys, k); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(keys, []string{"commits/2", "commits/3"}) {
		t.Fatalf("list after commits/1: %v", keys)
	}
	if err := s.Delete(ctx, "commits/3"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "commits/3"); err != nil {
		t.Fatalf("delete of a missing key: %v", err)
	}
	for _, bad := range []string{"packs/00000000000000000000000000000000.pack", "damaged/x", "/commits/1", "a/../packs/x", ""} {
		if err := s.PutNew(ctx, bad, nil); err == nil {
			t.Fatalf("put %q went through", bad)
		}
	}
	name := "0123456789abcdef0123456789abcdef.pack"
	data := bytes.Repeat([]byte("0123456789"), 100)
	put(t, s, name, data)
	for _, n := range []int64{1, 16, 1000, 5000} {
		if got, err := s.ReadTail(ctx, name, int64(len(data)), n); err != nil || !bytes.Equal(got, data[len(data)-int(min(n, 1000)):]) {
			t.Fatalf("tail of %d bytes: %d bytes, %v", n, len(got), err)
		}
	}
	if _, err := s.ReadTail(ctx, name, 2000, 16); err == nil {
		t.Fatal("a tail read with the wrong size went through")
	}
}
