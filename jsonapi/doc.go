// Package jsonapi is the one source of every --json document of casckpt:
// an exported type per document (Snapshot, List, Diff, Status, ...; each
// a Doc), which cmd/casckpt encodes (its emit takes only a Doc), the MCP
// server's output types embed (so their schemas are derived from it), and
// from which go generate ./jsonapi writes the Python client's field list
// (clients/python/casckpt/fields.json: each key and its JSON type), the
// TypeScript client's types (clients/typescript/src/documents.ts) and the
// key tables of docs/commands.md. Documents lists them all, with the
// command that prints each; Fields lists a document's keys and JSON types.
//
// Vocabulary: a document is what one command prints with --json (or, for
// hook claude-code, on stdout for Claude Code; for serve, each answer
// line); a key is one of its objects' names; Path is a file system path
// in a document, written so that a name that is not valid UTF-8 survives.
//
// Caveats: a pointer field is null when nil; a slice field a command
// promises as [] must be set non-nil by the command (Paths never returns
// nil). The documents that were once written from maps keep their keys
// sorted, so that the bytes stay the same. Adding a field means running
// go generate ./jsonapi; tests fail until it is run (TestFieldsJSONIsGenerated,
// TestDocumentsTSIsGenerated, TestCommandsDocTablesAreGenerated), when a
// type is a Doc that Documents does not list (TestEveryDocIsListed), and
// when a tool's output schema differs from its document (integrations/mcp).
package jsonapi

//go:generate go run ./internal/pyfields -o ../clients/python/casckpt/fields.json
//go:generate go run ./internal/mdtables -w ../docs/commands.md
//go:generate go run ./internal/tstypes -o ../clients/typescript/src/documents.ts
