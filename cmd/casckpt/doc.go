// Command casckpt is a git-free undo for the files an AI coding agent
// touches: it snapshots a working directory, lists, diffs and restores the
// snapshots, and keeps the store small. See docs/commands.md for the
// interface scripts rely on; every command takes --json.
//
// Layout, as restic's cmd/restic has it: app.go runs a command line (run,
// the globals, the root command, the one switch from errors to exit
// codes); each command X is a file named after it (snapshot.go, gc.go,
// clearlegacy.go for clear-legacy, recordwrite.go for record-write, hook.go
// for hook claude-code, mcp.go, serve.go) holding newXCommand, which binds its flags
// to an xOptions struct, and runX(ctx, opts, g, args), which does the work;
// the cobra closure only calls runX. What several commands share is in
// files named for it: args.go parses arguments and flags, project.go
// resolves DIR to its project, format.go prints numbers, times and paths
// for people, jsondoc.go fills the jsonapi documents, colour.go and bar.go
// draw on a terminal, prompt.go asks y/N, bucketenv.go and hermes.go read
// the environment of a bucket store and of the legacy Hermes stores. The
// Claude Code hook itself is integrations/claudecode; hook.go wires stdin,
// stdout and the store into it.
//
// A command that needs go-git or the MCP SDK (migrate, clear-legacy,
// status, mcp) keeps its runX in a file of the whole build only (the tag
// !casckpt_lean: migraterun.go, clearlegacyrun.go, statuslegacy.go,
// mcprun.go); the lean build's handoff_lean.go hands those command lines,
// and those on an s3:// store, to the whole build beside it (handoff.go).
//
// serve.go runs each request's command line through execute (app.go),
// the same command tree a process runs, one request at a time in this
// process: a request's cwd is the process's directory while it runs.
//
// Caveats: only this package reads the environment (CASCKPT_HOME,
// CASCKPT_NOW), the terminal or calls os.Exit; with --json nothing but the
// JSON document is written to stdout. The hook never fails: it logs to the
// store's hook.log instead.
package main
