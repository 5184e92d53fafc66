package main

import "testing"

// TestLimitFor: the soft memory limit follows the live heap a quarter
// above it, within memoryLimit and maxMemoryLimit.
func TestLimitFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, memoryLimit},
		{40 << 20, memoryLimit},
		{120 << 20, 150 << 20},
		{150 << 20, 150<<20 + 150<<18},
		{160 << 20, maxMemoryLimit},
		{1 << 30, maxMemoryLimit},
	} {
		if got := limitFor(c.live); got != c.want {
			t.Errorf("limitFor(%d MiB) = %d MiB, want %d", c.live>>20, got>>20, c.want>>20)
		}
	}
}
