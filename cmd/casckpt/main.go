// Command casckpt is a git-free undo for the files an AI coding agent
// touches: it snapshots a working directory, lists, diffs and restores the
// snapshots, and keeps the store small. See CONTRACT.md for the interface
// scripts rely on; every command takes --json.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}, os.Getenv)
	stop()
	os.Exit(code)
}
