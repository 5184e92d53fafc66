package packtest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"testing"

	"github.com/casckpt/casckpt/cas"
)

func testReadPastEnd(t *testing.T, s cas.PackStore) {
	name, data := NewName(), randomBytes(1000)
	put(t, s, name, data)
	r, err := s.Open(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]byte, 10)
	if n, err := r.ReadAt(buf, 996); n != 4 || err != io.EOF || !bytes.Equal(buf[:4], data[996:]) {
		t.Fatalf("read across the end: %d bytes, %v; want 4 and io.EOF", n, err)
	}
	for _, off := range []int64{1000, 1001, 1 << 40} {
		if n, err := r.ReadAt(buf, off); n != 0 || err != io.EOF {
			t.Fatalf("read at %d of 1000: %d bytes, %v; want 0 and io.EOF", off, n, err)
		}
	}
	if n, err := r.ReadAt(buf, -1); err == nil {
		t.Fatalf("read at -1: %d bytes, no error", n)
	}
}

func testReaderClosed(t *testing.T, s cas.PackStore) {
	name := NewName()
	put(t, s, name, []byte("some bytes"))
	r, err := s.Open(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if _, err := r.ReadAt(make([]byte, 4), 0); err == nil {
		t.Fatal("read after close succeeded")
	}
}

// testOpenSized: a store that is a cas.SizedOpener reads through
// OpenSized what Open reads, and fails the reads (not the opening) of a
// pack it lacks with fs.ErrNotExist. Other stores pass.
func testOpenSized(t *testing.T, s cas.PackStore) {
	so, ok := s.(cas.SizedOpener)
	if !ok {
		t.Skip("not a cas.SizedOpener")
	}
	ctx := context.Background()
	name, data := NewName(), randomBytes(300_000)
	put(t, s, name, data)
	if err := s.Sync(ctx); err != nil {
		t.Fatalf("sync: %v", err)
	}
	r, err := so.OpenSized(ctx, name, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]byte, 70_000)
	if n, err := r.ReadAt(buf, 200_000); n != len(buf) || err != nil || !bytes.Equal(buf, data[200_000:270_000]) {
		t.Fatalf("read through OpenSized: %d bytes, %v", n, err)
	}
	gone, err := so.OpenSized(ctx, NewName(), 1000)
	if err != nil {
		t.Fatalf("OpenSized of a missing pack: %v, want the error at the first read", err)
	}
	defer gone.Close()
	if _, err := gone.ReadAt(make([]byte, 10), 0); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("read of a missing pack: %v, want an error matching fs.ErrNotExist", err)
	}
}
