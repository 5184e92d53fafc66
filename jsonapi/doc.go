// Package jsonapi is the one source of every --json document of casckpt:
// an exported type per document (Snapshot, ListItem, Diff, Status, ...),
// which cmd/casckpt encodes, the MCP server's output types embed (so their
// schemas are derived from it), the Python client's field list
// (clients/python/casckpt/fields.json) is generated from, and
// docs/commands.md is checked against. Documents lists them all, with the
// command that prints each; Fields lists a document's keys and JSON types.
//
// Vocabulary: a document is what one command prints with --json; a key is
// one of its object's names; Path is a file system path in a document,
// written so that a name that is not valid UTF-8 survives.
//
// Caveats: a pointer field is null when nil; a slice field a command
// promises as [] must be set non-nil by the command (Paths never returns
// nil). The documents that were once written from maps keep their keys
// sorted, so that the bytes stay the same. Adding a field means adding it
// to docs/commands.md and regenerating fields.json (go generate ./jsonapi);
// tests fail until both are done.
package jsonapi

//go:generate go run ./internal/pyfields -o ../clients/python/casckpt/fields.json
//go:generate go run ./internal/mdtables -w ../docs/commands.md
