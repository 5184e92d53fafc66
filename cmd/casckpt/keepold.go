package main

import (
	"io"
	"sync"
)

// keptFiles are the files restores replaced or deleted, kept open
// (casckpt.RestoreOptions.KeepOld) so that their blocks are freed once
// the command has answered: main hands them on as it ends (release).
type keptFiles struct {
	mu    sync.Mutex
	files []io.Closer
}

// maxKept bounds the files kept open; each one past it is closed at once,
// its blocks freed then.
const maxKept = 1024

// keptOld collects the files of the command process main runs; nil in
// tests and for serve (a process that lives on frees what each restore
// replaced as it goes).
var keptOld *keptFiles

// keep holds f open until release, or closes it when maxKept are held.
func (k *keptFiles) keep(f io.Closer) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.files) >= maxKept {
		_ = f.Close()
		return
	}
	k.files = append(k.files, f)
}

// keepOld is RestoreOptions.KeepOld in this process: nil when keptOld
// is.
func keepOld() func(io.Closer) {
	if keptOld == nil {
		return nil
	}
	return keptOld.keep
}

// closeAll closes the files held.
func (k *keptFiles) closeAll() {
	for _, f := range k.files {
		_ = f.Close()
	}
	k.files = nil
}
