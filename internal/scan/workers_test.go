package scan

import (
	"runtime"
	"testing"

	"github.com/casckpt/casckpt/cas"
)

// The hashers are as many as the store compresses at once, not one a
// core: on 16 cores a first snapshot reads cas.Parallelism() files at a
// time, while the walk still lists with four goroutines a core.
func TestHashersFollowTheStoresParallelism(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(16)
	if got, want := (Options{}).withDefaults().Workers, cas.Parallelism(); got != want || want >= 16 {
		t.Errorf("default hashers at GOMAXPROCS 16: %d, want cas.Parallelism() (%d, under 16)", got, want)
	}
	if got := walkers(); got != 64 {
		t.Errorf("walkers at GOMAXPROCS 16: %d, want 64", got)
	}
}
