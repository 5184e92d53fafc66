// Command casckpt is a git-free undo for the files an AI coding agent
// touches: it snapshots a working directory, lists, diffs and restores the
// snapshots, and keeps the store small. See docs/commands.md for the
// interface scripts rely on; every command takes --json.
//
// Layout: app.go runs a command line (run, the globals, the one switch from
// errors to exit codes); each command is a newXCommand in a file of its
// own group (snapshot.go, list.go, diff.go, restore.go, read.go, pin.go,
// maint.go, migrate.go, version.go; hook.go, the Claude Code hook, which
// never fails and logs to the store's hook.log instead); args.go parses
// arguments and format.go prints numbers, times and paths for people.
//
// Caveats: only this package reads the environment (CASCKPT_HOME,
// CASCKPT_NOW), the terminal or calls os.Exit; with --json nothing but the
// JSON document is written to stdout.
package main
