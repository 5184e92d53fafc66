package cas

import (
	"runtime"
	"testing"
)

// A snapshot's compressions and readers follow the cores up to
// maxParallel and no further: its memory must not grow with the cores.
func TestParallelismFollowsCoresUpToTheCap(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, tc := range []struct{ procs, want int }{{1, 1}, {2, 2}, {maxParallel, maxParallel}, {16, maxParallel}, {64, maxParallel}} {
		runtime.GOMAXPROCS(tc.procs)
		if got := Parallelism(); got != tc.want {
			t.Errorf("GOMAXPROCS %d: Parallelism() = %d, want %d", tc.procs, got, tc.want)
		}
	}
}
