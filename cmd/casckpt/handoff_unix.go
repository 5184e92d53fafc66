//go:build casckpt_lean && !windows

package main

import (
	"os"
	"syscall"
)

// runCompanion replaces this process with the companion at path running
// args, as exec does: the same process ID, standard streams, environment
// (handedOff set) and signals. It returns only when the exec fails.
func runCompanion(path string, args []string) {
	_ = syscall.Exec(path, append([]string{path}, args...), append(os.Environ(), handedOff+"=1"))
}
