package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// maxMemoryLimit is the most that followLiveHeap raises the soft memory
// limit to: a first snapshot of a million files must stay within 256 MiB
// of RSS.
const maxMemoryLimit = 192 << 20

// limitFor is the soft memory limit for a heap of live bytes after a
// collection: a quarter above it, at least memoryLimit and at most
// maxMemoryLimit.
func limitFor(live uint64) int64 {
	return min(max(int64(live+live/4), memoryLimit), maxMemoryLimit)
}

// followLiveHeap sets the soft memory limit, after every collection, to
// limitFor the heap it found live. Go collects back to back once the
// live heap passes the limit: a no-change snapshot of a million files
// keeps more than memoryLimit live (a node per file and the stat cache)
// and, at a fixed 96 MiB, took 1.26x the time of a plain walk of the tree
// over it; with the limit a quarter above what is live it collects once
// the heap grows by that quarter. Below memoryLimit nothing changes.
func followLiveHeap() {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var arm func()
	arm = func() {
		// A finalizer runs after the collection that finds its object
		// unreachable; gcCycle holds a pointer so that it is not a tiny
		// allocation, whose finalizer may never run.
		runtime.SetFinalizer(&gcCycle{}, func(*gcCycle) {
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 {
				debug.SetMemoryLimit(limitFor(sample[0].Value.Uint64()))
			}
			arm()
		})
	}
	arm()
}

// gcCycle is the object whose finalizer marks a collection (followLiveHeap).
type gcCycle struct{ _ *byte }
