package packtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/casckpt/casckpt/cas"
)

// Run runs the conformance suite: each subtest calls newStore for a fresh,
// empty store. Subtests run one after the other; some of them use the
// store from many goroutines.
func Run(t *testing.T, newStore func(t *testing.T) cas.PackStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s cas.PackStore)
	}{
		{"CreateRead", testCreateRead},
		{"EmptyPack", testEmptyPack},
		{"NotVisibleBeforeClose", testNotVisibleBeforeClose},
		{"Abort", testAbort},
		{"DuplicateName", testDuplicateName},
		{"DuplicateWriters", testDuplicateWriters},
		{"Missing", testMissing},
		{"InvalidName", testInvalidName},
		{"StatListRemove", testStatListRemove},
		{"ListStops", testListStops},
		{"SetAside", testSetAside},
		{"ReadPastEnd", testReadPastEnd},
		{"ReaderClosed", testReaderClosed},
		{"RemoveIncomplete", testRemoveIncomplete},
		{"Canceled", testCanceled},
		{"Concurrent", testConcurrent},
		{"SyncAfterManyCloses", testSyncAfterManyCloses},
		{"OpenSized", testOpenSized},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore(t)) })
	}
}

// NewName returns a fresh random pack name.
func NewName() string {
	var p cas.PackInfo
	rand.Read(p.Name[:]) // never fails (crypto/rand)
	return p.FileName()
}

// randomBytes returns n random bytes.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// put stores data as pack name, written in pieces of up to 1000 bytes.
func put(t testing.TB, s cas.PackStore, name string, data []byte) {
	t.Helper()
	if err := tryPut(s, name, data); err != nil {
		t.Fatal(err)
	}
}

// tryPut is put for any goroutine.
func tryPut(s cas.PackStore, name string, data []byte) error {
	w, err := s.Create(context.Background(), name)
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	for rest := data; len(rest) > 0; {
		n := min(len(rest), 1000)
		if k, err := w.Write(rest[:n]); err != nil || k != n {
			w.Abort()
			return fmt.Errorf("write %s: %d of %d bytes, %v", name, k, n, err)
		}
		rest = rest[n:]
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("close %s: %w", name, err)
	}
	return nil
}

// get reads pack name whole, through a reader of the size it says.
func get(t testing.TB, s cas.PackStore, name string) []byte {
	t.Helper()
	b, err := tryGet(s, name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// tryGet is get for any goroutine.
func tryGet(s cas.PackStore, name string) ([]byte, error) {
	r, err := s.Open(context.Background(), name)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	defer r.Close()
	b, err := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return b, nil
}

// listed returns the packs s lists, sorted by name.
func listed(t testing.TB, s cas.PackStore) []cas.StoredPack {
	t.Helper()
	var packs []cas.StoredPack
	if err := s.List(context.Background(), func(p cas.StoredPack) error {
		packs = append(packs, p)
		return nil
	}); err != nil {
		t.Fatalf("list: %v", err)
	}
	slices.SortFunc(packs, func(a, b cas.StoredPack) int { return strings.Compare(a.Name, b.Name) })
	return packs
}

// checkGone fails unless pack name is neither opened, stated nor listed.
func checkGone(t testing.TB, s cas.PackStore, name string) {
	t.Helper()
	ctx := context.Background()
	if r, err := s.Open(ctx, name); !errors.Is(err, fs.ErrNotExist) {
		if err == nil {
			r.Close()
		}
		t.Fatalf("open %s: %v, want an error matching fs.ErrNotExist", name, err)
	}
	if _, err := s.Stat(ctx, name); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat %s: %v, want an error matching fs.ErrNotExist", name, err)
	}
	for _, p := range listed(t, s) {
		if p.Name == name {
			t.Fatalf("%s is listed", name)
		}
	}
}

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

// createFails writes data as pack name and returns the error of Create,
// of Close, or of the Sync after it (a store that completes packs in the
// background reports their failures there); a Write error fails the test.
func createFails(t *testing.T, s cas.PackStore, name string, data []byte) error {
	t.Helper()
	w, err := s.Create(context.Background(), name)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Abort()
		t.Fatalf("write: %v", err)
	}
	return closeSync(s, w)
}

// closeSync closes w, then syncs s: it returns the first error.
func closeSync(s cas.PackStore, w cas.PackWriter) error {
	if err := w.Close(); err != nil {
		return err
	}
	return s.Sync(context.Background())
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

// upperHex returns name with its hex digits in upper case.
func upperHex(name string) string { return strings.ToUpper(name[:32]) + name[32:] }

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

// testConcurrent creates packs from many goroutines, each reading back
// packs the others closed, through readers shared between goroutines.
func testConcurrent(t *testing.T, s cas.PackStore) {
	const workers, perWorker = 8, 4
	ctx := context.Background()
	var (
		mu     sync.Mutex
		stored = map[string][]byte{}
		names  []string
		wg     sync.WaitGroup
		errs   = make(chan error, workers)
	)
	shared := NewName()
	sharedData := randomBytes(64 << 10)
	put(t, s, shared, sharedData)
	sharedReader, err := s.Open(ctx, shared)
	if err != nil {
		t.Fatal(err)
	}
	defer sharedReader.Close()
	for i := range workers {
		wg.Go(func() {
			for j := range perWorker {
				name, data := NewName(), randomBytes(1000*(i+1)+j)
				if err := tryPut(s, name, data); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				stored[name] = data
				names = append(names, name)
				other := names[(i*perWorker+j)%len(names)]
				want := stored[other]
				mu.Unlock()
				if got, err := tryGet(s, other); err != nil || !bytes.Equal(got, want) {
					errs <- fmt.Errorf("%s read back while others were written: %d bytes, %v; want %d", other, len(got), err, len(want))
					return
				}
				buf := make([]byte, 4096)
				off := int64((i*perWorker + j) * 1000)
				if _, err := sharedReader.ReadAt(buf, off); err != nil || !bytes.Equal(buf, sharedData[off:off+4096]) {
					errs <- fmt.Errorf("a shared reader at %d: %v or the bytes differ", off, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := listed(t, s)
	if len(got) != workers*perWorker+1 {
		t.Fatalf("%d packs listed, want %d", len(got), workers*perWorker+1)
	}
	for _, p := range got {
		if want, ok := stored[p.Name]; ok && p.Size != int64(len(want)) {
			t.Fatalf("%s listed with %d bytes, want %d", p.Name, p.Size, len(want))
		}
	}
}

// testSyncAfterManyCloses: packs closed one after the other, without a
// read between them (a store may send them in the background), are all
// stored once Sync returns nil.
func testSyncAfterManyCloses(t *testing.T, s cas.PackStore) {
	ctx := context.Background()
	want := map[string][]byte{}
	for i := range 12 {
		name, data := NewName(), randomBytes(20_000+i)
		w, err := s.Create(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("close %s: %v", name, err)
		}
		want[name] = data
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatalf("sync: %v", err)
	}
	got := listed(t, s)
	if len(got) != len(want) {
		t.Fatalf("%d packs listed after sync, want %d", len(got), len(want))
	}
	for _, p := range got {
		if data, ok := want[p.Name]; !ok || p.Size != int64(len(data)) || !bytes.Equal(get(t, s, p.Name), data) {
			t.Fatalf("%s listed with %d bytes: not one of the packs closed, or its bytes differ", p.Name, p.Size)
		}
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
