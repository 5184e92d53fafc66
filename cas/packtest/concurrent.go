package packtest

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/casckpt/casckpt/cas"
)

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
