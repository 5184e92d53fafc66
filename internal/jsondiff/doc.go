// Package jsondiff compares two versions of a JSON document value by
// value: which members and elements were added, removed or changed.
//
// Vocabulary:
//   - A document is a JSON object or array, alone in the bytes but for
//     white space, in UTF-8, at most MaxSize bytes and nested at most
//     10,000 deep (encoding/json's limit). Anything else (a bare scalar,
//     two values, a byte-order mark) is not a document: Diff says so and
//     the caller falls back to a line diff.
//   - A path names a value inside a document, as JSONPath writes it: "$"
//     the document, ".key" a member whose key is an identifier (ASCII
//     letters, digits and "_", not starting with a digit), `["a b"]` any
//     other key as a JSON string, "[3]" an array's element by position.
//   - A change is one path whose value differs, with its op: "added"
//     (only the new version has it), "removed" (only the old one) or
//     "changed" (both, with different values). Only the deepest paths
//     that differ are changes: two objects are compared key by key, two
//     arrays position by position (an element inserted at the front
//     changes every later position); a value whose type changes (an
//     object becomes an array, a number a string, null anything) is one
//     change at its path.
//
// Caveats: values are compared as written, but for white space: numbers
// by their text, so that none loses precision (1.0 and 1 differ, as do 1e2
// and 100); strings by what they decode to ("\u0041" equals "A"). A
// change's From and To are the values' bytes as written, without white
// space. Of two members with the same key, the last one counts, as
// encoding/json decodes them. Changes come in a fixed order: depth first,
// an object's keys sorted by their bytes, an array's positions in order.
// Both documents are held in memory as trees (a few times their size).
package jsondiff
