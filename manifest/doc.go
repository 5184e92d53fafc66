// Package manifest is the snapshot tree: a Merkle tree of directories stored
// as objects in package cas.
//
// Vocabulary:
//   - A Tree is one directory: its Entries sorted by name (byte order).
//   - An Entry is a regular file (size, executable bit, the IDs of its
//     chunks in order), a symbolic link (its target text), a directory (the
//     ID of its Tree), or a path that was there but could not be read
//     (KindUnreadable: its name alone, no payload). Diff never reports a
//     change at or below an unreadable entry, and Walk and Lookup do not
//     show it, so nothing that restores from a diff ever touches it. Trees
//     without one encode exactly as before it existed.
//   - A file's content is cut into chunks by PutFile (PutContent for a
//     caller that reads files itself): one chunk up to 256 KiB, FastCDC
//     (16/64/256 KiB) above, so the same bytes always make the same chunks.
//     ChunkerName names that chunking; a store records it.
//   - A tree's ID is the cas ID of its encoding, so identical directories are
//     stored once and unchanged subtrees are shared between snapshots; two
//     trees are equal exactly when their IDs are.
//   - A state ID (Entry.StateID) identifies what a path holds, or that it
//     holds nothing: one comparison tells whether a path is still as an
//     agent left it. Write ledgers store them.
//
// The encoding (version 1) is deterministic: one byte 0x01, the entry count,
// then per entry its kind, flags, name and payload, integers as unsigned
// varints. Decode rejects anything Encode would not produce, including names
// that could address outside a directory ("", ".", "..", or containing '/'
// or NUL), so a damaged or hostile tree cannot steer a restore.
//
// Caveats: modification times, owners and permission bits other than the
// executable bit are not recorded, as in git.
package manifest
