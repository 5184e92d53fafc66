package scan

import (
	"runtime"
	"testing"
)

// A scan reads one file a core up to maxReaders, and lists with four
// goroutines a core: a reader holds no block (the store's Writer bounds
// those), so readers may outnumber the store's compressions.
func TestReadersFollowTheCoresUpToTheCap(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, tc := range []struct{ procs, readers int }{{1, 1}, {2, 2}, {8, 8}, {16, 16}, {64, maxReaders}} {
		runtime.GOMAXPROCS(tc.procs)
		if got := (Options{}).withDefaults().Workers; got != tc.readers {
			t.Errorf("readers at GOMAXPROCS %d: %d, want %d", tc.procs, got, tc.readers)
		}
		if got := walkers(); got != 4*tc.procs {
			t.Errorf("walkers at GOMAXPROCS %d: %d, want %d", tc.procs, got, 4*tc.procs)
		}
	}
}
