package cas

import (
	"errors"
	"testing"
)

// TestBlockCacheDecodesEachBlockOnceWithinItsBudget: blocks whose plain
// bytes fit blockCacheBytes together are decoded once however their reads
// interleave (a restore verifies then writes the members of a few dozen
// blocks); past the budget the least recently used go, the newest stays
// whatever its size, and a failed decode is not kept.
func TestBlockCacheDecodesEachBlockOnceWithinItsBudget(t *testing.T) {
	var c blockCache
	decodes := map[blockKey]int{}
	read := func(k blockKey, size int) {
		t.Helper()
		b, err := c.get(k, func() ([]byte, error) {
			decodes[k]++
			return make([]byte, size), nil
		})
		if err != nil || len(b) != size {
			t.Fatalf("block %v: %d bytes, %v", k, len(b), err)
		}
	}
	const n, size = 12, blockCacheBytes / 16 // 12 blocks: three quarters of the budget
	for range 3 {
		for i := range n {
			read(blockKey{1, uint32(i)}, size)
		}
		for i := n - 1; i >= 0; i-- {
			read(blockKey{1, uint32(i)}, size)
		}
	}
	for k, d := range decodes {
		if d != 1 {
			t.Errorf("block %v decoded %d times, want once", k, d)
		}
	}
	if c.size != n*size {
		t.Fatalf("cache holds %d bytes, want %d", c.size, n*size)
	}

	huge := blockKey{2, 0}
	read(huge, blockCacheBytes+1) // over the budget alone: kept, the rest dropped
	if len(c.entries) != 1 || c.size != blockCacheBytes+1 {
		t.Fatalf("after a block over the budget: %d blocks, %d bytes; want it alone", len(c.entries), c.size)
	}
	read(huge, blockCacheBytes+1)
	read(blockKey{1, 0}, size)
	if decodes[huge] != 1 || decodes[blockKey{1, 0}] != 2 {
		t.Fatalf("decodes: the big block %d (want 1), an evicted one %d (want 2)", decodes[huge], decodes[blockKey{1, 0}])
	}
	if _, ok := c.entries[huge]; ok || c.size != size {
		t.Fatalf("the big block should have made room for the newest: %d bytes cached", c.size)
	}

	bad := blockKey{3, 0}
	fail := errors.New("damaged")
	for range 2 {
		if _, err := c.get(bad, func() ([]byte, error) { decodes[bad]++; return nil, fail }); !errors.Is(err, fail) {
			t.Fatalf("a failed decode returned %v", err)
		}
	}
	if decodes[bad] != 2 || c.size != size {
		t.Fatalf("a failed decode was kept: tried %d times, %d bytes cached", decodes[bad], c.size)
	}
}
