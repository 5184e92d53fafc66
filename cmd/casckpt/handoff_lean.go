//go:build casckpt_lean

package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

// lean reports whether this is the release's lean casckpt (see
// companion): it is.
const lean = true

// handOff runs the command line args in the companion when it needs the
// whole build (see needsCompanion), and then does not return. It returns
// when it does not, or the companion is missing or does not start: the
// command then refuses (see noCompanion).
func handOff(args []string) {
	if !mayHandOff() || !needsCompanion(args, os.Getenv) {
		return
	}
	path, err := companionPath()
	if err != nil {
		return
	}
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return
	}
	runCompanion(path, args)
}

// The commands of wholeCommands run here only when the companion did
// not: each refuses, saying what to do.

func runMigrate(context.Context, migrateOptions, *globals) error {
	return noCompanion("migrate", "migrate")
}

func runClearLegacy(context.Context, clearLegacyOptions, *globals) error {
	return noCompanion("clear-legacy", "clear-legacy")
}

func runMCP(*cobra.Command, *globals) error { return noCompanion("mcp", "mcp") }

func (g *globals) legacyStores(context.Context, *casckpt.Store) ([]jsonapi.Legacy, error) {
	return nil, noCompanion("status", "status")
}
