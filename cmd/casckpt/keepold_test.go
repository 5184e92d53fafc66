package main

import (
	"slices"
	"testing"
)

// closer records whether it was closed.
type closer struct{ closed bool }

func (c *closer) Close() error { c.closed = true; return nil }

// TestKeptFilesHoldsUpToMaxKept: keep holds files open until closeAll,
// and closes at once each one past maxKept.
func TestKeptFilesHoldsUpToMaxKept(t *testing.T) {
	var k keptFiles
	files := make([]*closer, maxKept+2)
	for i := range files {
		files[i] = &closer{}
		k.keep(files[i])
	}
	closed := func() []bool {
		var c []bool
		for _, f := range files {
			c = append(c, f.closed)
		}
		return c
	}
	want := append(make([]bool, maxKept), true, true)
	if got := closed(); !slices.Equal(got, want) {
		t.Fatalf("closed before closeAll: %d of %d, want the 2 past maxKept", countTrue(got...), len(got))
	}
	k.closeAll()
	if got := closed(); countTrue(got...) != len(files) {
		t.Fatalf("closed after closeAll: %d of %d", countTrue(got...), len(files))
	}
}
