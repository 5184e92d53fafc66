// Package mcp is casckpt's Model Context Protocol server: the tools
// checkpoint_list, checkpoint_diff, checkpoint_restore, checkpoint_create,
// checkpoint_undo, checkpoint_turns, checkpoint_file_history,
// checkpoint_read_file, checkpoint_ls, checkpoint_pin and
// checkpoint_record_write, built on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk).
//
// Vocabulary: a tool takes the project's dir and the options of its command
// (an Input struct per tool) and returns the JSON document the command prints
// with --json, as structured content (an Output struct per tool, which
// embeds or wraps the command's jsonapi document), with the store it used
// (Origin). Tools lists the tools: the command each runs and its Input
// type, each of whose fields names in its cli tag the flag or positional
// argument of the command it is. The input and output schemas are derived
// from those structs (with the SDK's jsonschema package); an argument that
// is a flag of its command is described as the flag's --help line
// describes it. Tests fail when an Input field and the command line it
// gives, the command's flag, or docs/commands.md's table of the tools
// disagree, and when an output schema and the jsonapi document do. Arguments and documents are decoded and encoded once, by
// encoding/json, so a path that is not valid UTF-8 keeps its "\udcXX"
// escapes both ways (jsonapi.Path).
//
// The server does not open the store itself: it runs the command through a
// Runner that the caller (cmd/casckpt) gives, with --json, and decodes what
// the command prints into the tool's Output, refusing a field the Output
// does not carry. So the tool's document is the command's, and a command
// that gains a JSON field fails the tool (and its tests) until the Output
// carries it too.
//
// Caveats: MCP structured content is a JSON object, so the commands that
// print an array (list, turns, log, ls) are wrapped in an object with one
// field (snapshots, turns, history, entries). A dir that is not absolute is
// refused: the server's working directory is no project a client means.
// checkpoint_diff runs diff --patch and keeps the patches of the files its
// paths select, at most max_patch_bytes of them (patch_truncated says they
// were cut); its text content is a line per file and the patches.
// checkpoint_restore and checkpoint_undo are annotated destructive and
// default to dry_run: true. checkpoint_read_file's text content is the
// file's text when it is UTF-8 text, not the JSON of its document, so that
// a model reads the file as it is. Every failure (an unknown snapshot, a
// malformed argument, a busy store) is a tool error naming the store, never
// an error of the protocol or a crash of the server.
package mcp
