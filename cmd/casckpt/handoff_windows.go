//go:build casckpt_lean && windows

package main

import (
	"os"
	"os/exec"
	"os/signal"
)

// runCompanion runs the companion at path with args on this process's
// standard streams and environment (handedOff set), and exits with its
// exit code: Windows has no exec. Ctrl-C reaches both processes; this
// one ignores it and waits for the companion, which handles it. It
// returns only when the companion does not start.
func runCompanion(path string, args []string) {
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), handedOff+"=1")
	signal.Ignore(os.Interrupt)
	if err := cmd.Start(); err != nil {
		signal.Reset(os.Interrupt)
		return
	}
	_ = cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	if code < 0 {
		code = exitFailed
	}
	os.Exit(code)
}
