package packtest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"slices"
	"testing"

	"github.com/casckpt/casckpt/cas"
)

func testCreateRead(t *testing.T, s cas.PackStore) {
	ctx := context.Background()
	name, data := NewName(), randomBytes(100_000)
	put(t, s, name, data)
	if err := s.Sync(ctx); err != nil {
		t.Fatalf("sync: %v", err)
	}
	if st, err := s.Stat(ctx, name); err != nil || st != (cas.StoredPack{Name: name, Size: int64(len(data))}) {
		t.Fatalf("stat: %+v %v, want %d bytes", st, err, len(data))
	}
	if got := listed(t, s); !slices.Equal(got, []cas.StoredPack{{Name: name, Size: int64(len(data))}}) {
		t.Fatalf("list: %+v", got)
	}
	r, err := s.Open(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Size() != int64(len(data)) {
		t.Fatalf("size %d, want %d", r.Size(), len(data))
	}
	for _, rg := range [][2]int{{0, 8}, {0, len(data)}, {12345, 54321}, {len(data) - 16, len(data)}, {500, 500}} {
		buf := make([]byte, rg[1]-rg[0])
		n, err := r.ReadAt(buf, int64(rg[0]))
		if n != len(buf) || (err != nil && !(err == io.EOF && rg[1] == len(data))) {
			t.Fatalf("read [%d, %d): %d bytes, %v", rg[0], rg[1], n, err)
		}
		if !bytes.Equal(buf, data[rg[0]:rg[1]]) {
			t.Fatalf("read [%d, %d): the bytes differ", rg[0], rg[1])
		}
	}
}

func testEmptyPack(t *testing.T, s cas.PackStore) {
	name := NewName()
	put(t, s, name, nil)
	if st, err := s.Stat(context.Background(), name); err != nil || st.Size != 0 {
		t.Fatalf("stat: %+v %v", st, err)
	}
	if b := get(t, s, name); len(b) != 0 {
		t.Fatalf("read %d bytes of an empty pack", len(b))
	}
}

func testNotVisibleBeforeClose(t *testing.T, s cas.PackStore) {
	name, data := NewName(), randomBytes(5000)
	w, err := s.Create(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	checkGone(t, s, name)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(get(t, s, name), data) {
		t.Fatal("the pack read back differs")
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("abort after close: %v", err)
	}
	if !bytes.Equal(get(t, s, name), data) {
		t.Fatal("abort after close changed the pack")
	}
	if err := w.Close(); err == nil {
		t.Fatal("a second close succeeded")
	}
}

func testAbort(t *testing.T, s cas.PackStore) {
	name := NewName()
	w, err := s.Create(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(randomBytes(5000)); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("abort: %v", err)
	}
	checkGone(t, s, name)
	if got := listed(t, s); len(got) != 0 {
		t.Fatalf("an aborted pack left %+v", got)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("second abort: %v", err)
	}
	if err := w.Close(); err == nil {
		t.Fatal("close after abort succeeded")
	}
	checkGone(t, s, name)
	// The name is free again.
	data := randomBytes(10)
	put(t, s, name, data)
	if !bytes.Equal(get(t, s, name), data) {
		t.Fatal("the pack read back differs")
	}
}

func testDuplicateName(t *testing.T, s cas.PackStore) {
	name, data := NewName(), randomBytes(3000)
	put(t, s, name, data)
	if err := createFails(t, s, name, randomBytes(10)); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("creating a stored name again: %v, want an error matching fs.ErrExist", err)
	}
	if !bytes.Equal(get(t, s, name), data) {
		t.Fatal("a refused create changed the pack")
	}
	if got := listed(t, s); len(got) != 1 {
		t.Fatalf("list: %+v", got)
	}
}

// testDuplicateWriters: of two writers of one name at once, one wins.
func testDuplicateWriters(t *testing.T, s cas.PackStore) {
	ctx := context.Background()
	name := NewName()
	first, second := randomBytes(2000), randomBytes(3000)
	w1, err := s.Create(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w1.Write(first); err != nil {
		t.Fatal(err)
	}
	w2, err := s.Create(ctx, name)
	if err == nil {
		if _, err := w2.Write(second); err != nil {
			t.Fatal(err)
		}
	} else if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second create: %v, want nil or an error matching fs.ErrExist", err)
	}
	if err := w1.Close(); err != nil {
		t.Fatalf("first close: %v", err)
	}
	if w2 != nil {
		if err := closeSync(s, w2); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("second close: %v, want an error matching fs.ErrExist", err)
		}
	}
	if !bytes.Equal(get(t, s, name), first) {
		t.Fatal("the pack is not the first writer's")
	}
}
