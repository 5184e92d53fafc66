package cas

import (
	"bytes"
	"testing"
)

// TestPrefetchStaysAheadWithinItsBound: a block may be decoded while the
// blocks decoded for objects the copy has not reached, with it, fit in
// prefetchAhead, and any block whose first object the copy has passed.
func TestPrefetchStaysAheadWithinItsBound(t *testing.T) {
	const third = prefetchAhead / 3
	p := &basePrefetch{}
	p.moved.L = &p.mu
	for i := range 6 {
		p.need = append(p.need, neededBlock{loc: Location{PackEntry: PackEntry{BlockLen: third}}, first: int64(10 * i)})
	}
	ready := func() (n int) {
		p.mu.Lock()
		defer p.mu.Unlock()
		for n < len(p.need) && p.ready(n) {
			n++
		}
		return n
	}
	if got := ready(); got != 3 {
		t.Fatalf("before the copy starts %d blocks may be decoded, want 3 (prefetchAhead holds three)", got)
	}
	p.advance(10) // the copy is past block 0's first object
	if got := ready(); got != 4 {
		t.Fatalf("with the copy at object 10, %d blocks may be decoded, want 4", got)
	}
	p.advance(45)
	if got := ready(); got != 6 {
		t.Fatalf("with the copy at object 55, %d blocks may be decoded, want all 6", got)
	}
}

// TestPrefetchFinishEndsItsWaits: a goroutine waiting for the copy to
// move on is let go when the copy is over, and told so.
func TestPrefetchFinishEndsItsWaits(t *testing.T) {
	p := &basePrefetch{reader: NewStore(nil, nil)}
	p.moved.L = &p.mu
	for i := range 3 {
		pack := &cachedPack{r: inlineReader{bytes.NewReader(nil)}, users: 1}
		p.need = append(p.need, neededBlock{loc: Location{PackEntry: PackEntry{BlockLen: prefetchAhead}}, first: int64(i), pack: pack})
	}
	got := make(chan bool)
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		got <- p.wait(2) // blocks 1 and 2 do not fit ahead of object 0
	}()
	finished := make(chan struct{})
	go func() {
		p.finish()
		close(finished)
	}()
	if <-got {
		t.Fatal("wait reported block 2 ready, want false once the copy is over")
	}
	<-finished
	for _, b := range p.need {
		if b.pack.users != 0 {
			t.Fatalf("a pack reader is still held by %d after finish", b.pack.users)
		}
	}
}
