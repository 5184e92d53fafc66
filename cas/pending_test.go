package cas

import (
	"encoding/binary"
	"testing"
)

// TestPendingSet: IDs added, across the map and several sorted runs, are
// found, and no other.
func TestPendingSet(t *testing.T) {
	var s pendingSet
	id := func(i int) ID {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(i))
		return Sum(KindChunk, b[:])
	}
	n := 2*runLength + 1000
	for i := 0; i < n; i += 2 { // the even ones
		s.add(id(i))
	}
	if len(s.runs) != 1 || len(s.recent) != n/2-runLength {
		t.Fatalf("%d runs, %d in the map; want 1 and %d", len(s.runs), len(s.recent), n/2-runLength)
	}
	for i := range n {
		if got := s.has(id(i)); got != (i%2 == 0) {
			t.Fatalf("has(id %d) = %v", i, got)
		}
	}
}
