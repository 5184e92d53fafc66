package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

// memoryLimit is the soft limit of the command's heap (GOMEMLIMIT, when
// set, wins). A first snapshot of a tree of 100,000 files keeps about 40
// MiB live, and Go's default pacing lets the heap grow to twice what is
// live before it collects, which took such a snapshot to 136-201 MiB of
// RSS; near the limit it collects sooner instead (104 MiB, for the same
// CPU time). Smaller commands never come near it. A command whose live
// heap passes it raises it (followLiveHeap).
const memoryLimit = 96 << 20

// startGCPercent is the garbage collector's headroom (GOGC, when set,
// wins) until a snapshot has hashed bigSnapshot bytes. At Go's default of
// 100 the first collection comes at 4 MiB of heap, and a no-change
// snapshot of 11,000 files, which allocates about 5 MiB, collected two or
// three times; each collection's sweep touches fresh pages, and a page
// fault costs about 15 us on the VMs agents run in. At 200 the first
// comes at 8 MiB, and that snapshot collects none.
const startGCPercent = 200

func main() {
	if releasing() {
		return // exiting frees the files inherited: see keptFiles.release
	}
	handOff(os.Args[1:])
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
		followLiveHeap()
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(startGCPercent)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		signal.Stop(sigs) // a second signal ends the process at once
		cancel(signalError{sig.(syscall.Signal)})
	}()
	keptOld = &keptFiles{}
	code := run(ctx, os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}, os.Getenv)
	keptOld.release()
	os.Exit(code)
}
