//go:build linux

// Command rusage runs a command and writes what it used to file
// descriptor 3: "WALL_NS CPU_NS MAXRSS_KIB", CPU being user plus system
// time. It passes the command's standard streams and exit code through.
//
// The benchmarks run every peer's process through it because Linux counts
// in a process's peak resident size (ru_maxrss) the memory of the process
// that forked it: Go forks with CLONE_VM, and at exec the kernel records
// the parent's high-water mark as the child's. Forked from this small
// process, a child's figure is its own (plus at most this process's few
// MiB), whatever the size of the benchmark process. It builds on Linux
// only: the benchmarks run there, and ru_maxrss is in KiB there.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: rusage PROGRAM [ARG...] (the report goes to file descriptor 3)")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		fmt.Fprintf(os.Stderr, "rusage: %v\n", err)
		os.Exit(127)
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if ru == nil {
		ru = &syscall.Rusage{}
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	report := os.NewFile(3, "report")
	if _, err := fmt.Fprintf(report, "%d %d %d\n", wall, cpu, ru.Maxrss); err != nil {
		fmt.Fprintf(os.Stderr, "rusage: write the report to file descriptor 3: %v\n", err)
		os.Exit(127)
	}
	os.Exit(cmd.ProcessState.ExitCode())
}
