package s3store_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/packtest"
	"github.com/casckpt/casckpt/cas/s3store"
	"github.com/casckpt/casckpt/internal/s3test"
	"github.com/minio/minio-go/v7"
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
	if b, err := s.Get(ctx, "commits/2", 9); err != nil || string(b) != "commits/2" {
		t.Fatalf("get: %q %v", b, err)
	}
	if b, err := s.Get(ctx, "commits/2", 8); !errors.Is(err, s3store.ErrTooLarge) {
		t.Fatalf("get of an object over the limit: %q %v", b, err)
	}
	if _, err := s.Get(ctx, "commits/9", 100); !errors.Is(err, fs.ErrNotExist) {
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
	// A pack of another size than its commit says is a bad pack, not a
	// failure of the server: the 416 of a range past its end included.
	for _, size := range []int64{2000, 1001} {
		if _, err := s.ReadTail(ctx, name, size, 16); !errors.Is(err, cas.ErrBadPack) {
			t.Fatalf("a tail read with the wrong size %d: %v", size, err)
		}
	}
	// A reader of a pack shorter than its index says finds it corrupt,
	// past its end and across it.
	r, err := s.OpenSized(ctx, name, 1<<20+5000)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, off := range []int64{1<<20 + 10, 900} {
		if _, err := r.ReadAt(make([]byte, 200), off); !errors.Is(err, cas.ErrCorrupt) {
			t.Fatalf("a read at %d of a pack shorter than its index says: %v", off, err)
		}
	}
}

// TestBlockReads: reads of a pack of several blocks return its bytes at
// every offset and length, across block boundaries, from one GET per
// block at most; a pack written again under its name is not served from
// the blocks of the first.
func TestBlockReads(t *testing.T) {
	srv := s3test.Start(t)
	base, err := minio.DefaultTransport(false)
	if err != nil {
		t.Fatal(err)
	}
	cnt := &counter{base: base}
	c := config(srv)
	c.Transport = cnt
	s := open(t, c)
	ctx := context.Background()
	name := packtest.NewName()
	data := make([]byte, 3<<20+12345)
	rand.Read(data)
	put(t, s, name, data)
	r, err := s.Open(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	cnt.take()
	for _, c := range []struct{ off, n int }{{0, 10}, {1<<20 - 5, 10}, {2<<20 - 1, 1<<20 + 2}, {len(data) - 7, 7}, {100, 3 << 20}, {len(data) - 3, 10}} {
		buf := make([]byte, c.n)
		k, err := r.ReadAt(buf, int64(c.off))
		want := data[c.off:min(c.off+c.n, len(data))]
		if k != len(want) || !bytes.Equal(buf[:k], want) || (k < c.n) != errors.Is(err, io.EOF) || (err != nil && !errors.Is(err, io.EOF)) {
			t.Fatalf("read %d at %d: %d bytes, %v", c.n, c.off, k, err)
		}
	}
	if got := strings.Fields(cnt.take()); len(got) > 4 {
		t.Fatalf("reads of a pack of 4 blocks made %d requests: %v", len(got), got)
	}
	r.Close()
	if err := s.Remove(ctx, name); err != nil {
		t.Fatal(err)
	}
	again := bytes.Repeat([]byte("y"), len(data))
	put(t, s, name, again)
	r, err = s.Open(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]byte, 100)
	if _, err := r.ReadAt(buf, 0); err != nil || !bytes.Equal(buf, again[:100]) {
		t.Fatalf("read of the pack written again: %q %v", buf[:10], err)
	}
}
