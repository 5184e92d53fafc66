package packtest

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/cas"
)

func testMissing(t *testing.T, s cas.PackStore) {
	ctx := context.Background()
	put(t, s, NewName(), []byte("another pack"))
	name := NewName()
	checkGone(t, s, name)
	if err := s.Remove(ctx, name); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("remove: %v, want an error matching fs.ErrNotExist", err)
	}
	if err := s.SetAside(ctx, name); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("set aside: %v, want an error matching fs.ErrNotExist", err)
	}
}

func testInvalidName(t *testing.T, s cas.PackStore) {
	ctx := context.Background()
	valid := NewName()
	for _, name := range []string{"", "x.pack", "../" + valid, valid + "/x", valid[:32], upperHex(valid), ".tmp-" + valid[:32], valid + ".damaged"} {
		if w, err := s.Create(ctx, name); err == nil {
			w.Abort()
			t.Errorf("create %q succeeded", name)
		}
		if r, err := s.Open(ctx, name); err == nil {
			r.Close()
			t.Errorf("open %q succeeded", name)
		}
		if _, err := s.Stat(ctx, name); err == nil {
			t.Errorf("stat %q succeeded", name)
		}
		if err := s.Remove(ctx, name); err == nil {
			t.Errorf("remove %q succeeded", name)
		}
		if err := s.SetAside(ctx, name); err == nil {
			t.Errorf("set aside %q succeeded", name)
		}
	}
	if got := listed(t, s); len(got) != 0 {
		t.Fatalf("list: %+v", got)
	}
}

func testStatListRemove(t *testing.T, s cas.PackStore) {
	ctx := context.Background()
	var want []cas.StoredPack
	for i := range 3 {
		p := cas.StoredPack{Name: NewName(), Size: int64(100 * (i + 1))}
		put(t, s, p.Name, randomBytes(int(p.Size)))
		want = append(want, p)
	}
	slices.SortFunc(want, func(a, b cas.StoredPack) int { return strings.Compare(a.Name, b.Name) })
	if got := listed(t, s); !slices.Equal(got, want) {
		t.Fatalf("list: %+v, want %+v", got, want)
	}
	for _, p := range want {
		if st, err := s.Stat(ctx, p.Name); err != nil || st != p {
			t.Fatalf("stat: %+v %v, want %+v", st, err, p)
		}
	}
	if err := s.Remove(ctx, want[1].Name); err != nil {
		t.Fatalf("remove: %v", err)
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatalf("sync: %v", err)
	}
	checkGone(t, s, want[1].Name)
	if got := listed(t, s); !slices.Equal(got, []cas.StoredPack{want[0], want[2]}) {
		t.Fatalf("list after remove: %+v", got)
	}
	if err := s.Remove(ctx, want[1].Name); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("second remove: %v, want an error matching fs.ErrNotExist", err)
	}
}

func testListStops(t *testing.T, s cas.PackStore) {
	for range 3 {
		put(t, s, NewName(), []byte("pack"))
	}
	stop := errors.New("stop")
	calls := 0
	err := s.List(context.Background(), func(cas.StoredPack) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("list whose callback fails: %v after %d calls, want its error after 1", err, calls)
	}
}

func testSetAside(t *testing.T, s cas.PackStore) {
	ctx := context.Background()
	name, other := NewName(), NewName()
	put(t, s, name, []byte("damaged"))
	put(t, s, other, []byte("sound"))
	if err := s.SetAside(ctx, name); err != nil {
		t.Fatalf("set aside: %v", err)
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatalf("sync: %v", err)
	}
	checkGone(t, s, name)
	if got := listed(t, s); !slices.Equal(got, []cas.StoredPack{{Name: other, Size: 5}}) {
		t.Fatalf("list: %+v", got)
	}
	if err := s.SetAside(ctx, name); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("second set aside: %v, want an error matching fs.ErrNotExist", err)
	}
	put(t, s, name, []byte("new"))
	if got := get(t, s, name); string(got) != "new" {
		t.Fatalf("the pack made again reads %q", got)
	}
}

// testRemoveIncomplete: a writer that never ends (its process was killed)
// leaves nothing RemoveIncomplete does not delete, and complete packs stay.
func testRemoveIncomplete(t *testing.T, s cas.PackStore) {
	ctx := context.Background()
	kept, data := NewName(), randomBytes(2000)
	put(t, s, kept, data)
	abandoned := NewName()
	w, err := s.Create(ctx, abandoned)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(randomBytes(3000)); err != nil {
		t.Fatal(err)
	}
	freed, err := s.RemoveIncomplete(ctx)
	if err != nil || freed < 0 || freed > 3000 {
		t.Fatalf("remove incomplete: %d bytes freed, %v", freed, err)
	}
	checkGone(t, s, abandoned)
	if !bytes.Equal(get(t, s, kept), data) {
		t.Fatal("a complete pack changed")
	}
	w.Abort() // its bytes may already be gone: only its error may say so
	checkGone(t, s, abandoned)
	if freed, err := s.RemoveIncomplete(ctx); err != nil || freed != 0 {
		t.Fatalf("remove incomplete with nothing left: %d bytes freed, %v", freed, err)
	}
	if got := listed(t, s); !slices.Equal(got, []cas.StoredPack{{Name: kept, Size: 2000}}) {
		t.Fatalf("list: %+v", got)
	}
}

func testCanceled(t *testing.T, s cas.PackStore) {
	name := NewName()
	put(t, s, name, []byte("pack"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	check := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context: %v, want context.Canceled", op, err)
		}
	}
	w, err := s.Create(ctx, NewName())
	if err == nil {
		w.Abort()
	}
	check("create", err)
	r, err := s.Open(ctx, name)
	if err == nil {
		r.Close()
	}
	check("open", err)
	_, err = s.Stat(ctx, name)
	check("stat", err)
	check("list", s.List(ctx, func(cas.StoredPack) error { return nil }))
	check("remove", s.Remove(ctx, name))
	check("set aside", s.SetAside(ctx, name))
	_, err = s.RemoveIncomplete(ctx)
	check("remove incomplete", err)
	check("sync", s.Sync(ctx))
	if got := get(t, s, name); string(got) != "pack" {
		t.Fatalf("the pack reads %q after canceled calls", got)
	}
}
