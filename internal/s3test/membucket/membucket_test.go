package membucket_test

import (
	"context"
	"errors"
	"io/fs"
	"testing"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/packtest"
	"github.com/casckpt/casckpt/cas/s3store"
	"github.com/casckpt/casckpt/internal/s3test/membucket"
)

// TestPackStoreConformance: the bucket's packs pass the suite every pack
// store passes.
func TestPackStoreConformance(t *testing.T) {
	packtest.Run(t, func(*testing.T) cas.PackStore { return membucket.New(time.Unix(0, 0)) })
}

// TestObjects: conditional writes, listings in key order after a key, and
// Last-Modified by the server's clock, which the test advances.
func TestObjects(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b := membucket.New(start)
	if err := b.PutNew(ctx, "a/1", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := b.PutNew(ctx, "a/1", []byte("x")); err != nil {
		t.Fatalf("a PUT of the same bytes again: %v, want it taken as a retry", err)
	}
	if err := b.PutNew(ctx, "a/1", []byte("y")); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("PutNew over another object: %v, want fs.ErrExist", err)
	}
	b.Advance(time.Hour)
	if err := b.PutNew(ctx, "a/2", []byte("zz")); err != nil {
		t.Fatal(err)
	}
	if err := b.PutNew(ctx, "packs/p", nil); err == nil {
		t.Fatal("PutNew reached packs/")
	}
	var got []string
	var modified []time.Time
	if err := b.ListInfo(ctx, "a/", "a/0", func(o s3store.ObjectInfo) error {
		got, modified = append(got, o.Key), append(modified, o.LastModified)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "a/1" || got[1] != "a/2" || !modified[0].Equal(start) || !modified[1].Equal(start.Add(time.Hour)) {
		t.Fatalf("listed %v at %v, want a/1 at %v and a/2 an hour later", got, modified, start)
	}
	got = nil
	if err := b.ListAfter(ctx, "a/", "a/1", func(k string) error { got = append(got, k); return nil }); err != nil || len(got) != 1 || got[0] != "a/2" {
		t.Fatalf("listed after a/1: %v %v, want [a/2]", got, err)
	}
	info, err := b.Head(ctx, "a/2")
	if err != nil || info.Size != 2 {
		t.Fatalf("head: %+v %v", info, err)
	}
	if err := b.PutIfMatch(ctx, "a/2", "other", []byte("w")); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("PutIfMatch with a stale ETag: %v, want fs.ErrExist", err)
	}
	if err := b.PutIfMatch(ctx, "a/2", info.ETag, []byte("w")); err != nil {
		t.Fatal(err)
	}
	if data, err := b.Get(ctx, "a/2", 10); err != nil || string(data) != "w" {
		t.Fatalf("get after PutIfMatch: %q %v", data, err)
	}
	if _, err := b.Get(ctx, "a/1", 0); err == nil {
		t.Fatal("Get beyond the limit succeeded")
	}
	if err := b.Delete(ctx, "a/2"); err != nil {
		t.Fatal(err)
	}
	if err := b.PutIfMatch(ctx, "a/2", info.ETag, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("PutIfMatch of a deleted object: %v, want fs.ErrNotExist", err)
	}
	if _, err := b.Get(ctx, "a/2", 10); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("get of a deleted object: %v, want fs.ErrNotExist", err)
	}
}

// TestFailAfter: past its limit every call fails, as on a cut network,
// until the limit is lifted.
func TestFailAfter(t *testing.T) {
	ctx := context.Background()
	b := membucket.New(time.Unix(0, 0))
	b.FailAfter(1)
	if err := b.PutNew(ctx, "a", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, "a", 1); err == nil {
		t.Fatal("a call past the limit succeeded")
	}
	if err := b.List(ctx, func(cas.StoredPack) error { return nil }); err == nil {
		t.Fatal("a listing of packs past the limit succeeded")
	}
	b.FailAfter(-1)
	if _, err := b.Get(ctx, "a", 1); err != nil {
		t.Fatal(err)
	}
}
