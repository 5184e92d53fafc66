// Package cas is casckpt's content-addressed object store: the leaf of the
// layering that every other package builds on.
//
// Vocabulary:
//   - An object is a byte string of a Kind (a file chunk or a tree). Its ID is
//     the BLAKE3 keyed hash of its plain bytes, keyed per kind, so a chunk can
//     never be read as a tree nor the other way round.
//   - A pack is an immutable byte string holding many objects, with a
//     per-object header and a trailing table, so the object index can be
//     rebuilt from the packs alone. Small objects (up to MaxMemberSize) are
//     members of blocks: a block's members are zstd-compressed together,
//     as one frame, which shrinks small source files far more than
//     compressing each alone; larger objects are compressed alone. Either
//     is stored raw when zstd does not help. Every object stays verifiable
//     on its own (Get decodes its block and checks the member's hash) and
//     collectable on its own (a sweep copies the live members of a block
//     into a new one). Packs are named by 128 random bits; their number
//     within the index is what object locations refer to.
//   - A member may be stored as a delta (delta.go): a zstd frame whose
//     dictionary is another object, its base, an earlier version of the
//     same path that a sweep or a fold was told of (SweepOptions.Bases).
//     A base is never a delta itself; a sweep keeps every base of a live
//     delta, and Get checks both against their IDs.
//   - A pack store (PackStore) is where pack bytes live: written once,
//     read by ranges, listed, deleted. Package cas/packstore holds the
//     local directory of today; cas/packtest is the suite every one passes.
//   - The object index maps an ID to its pack, offset and lengths. This
//     package declares what it needs of it (Index to read, IndexWriter
//     inside a write transaction); package index keeps it in the store's
//     database beside the snapshot records, so one commit makes new objects
//     and the records that refer to them visible together.
//
// Write order: a Writer appends objects to new packs, completes each (the
// local store writes a temporary file, fsyncs it and renames it into place)
// and makes them durable with the pack store's Sync (the local store fsyncs
// the directory); only then does Commit check that each pack is still
// stored and add the locations to the object index inside the caller's
// write transaction. A crash therefore leaves at most unreferenced packs,
// never an index entry that points at missing data. A big write (a first
// snapshot of a large tree) commits instead with CommitInParts, after the
// same Flush: the packs' records in one transaction, then the objects in
// parts by ranges of their IDs, each a transaction of its own, all before
// the caller's transaction that refers to them. A crash in between leaves
// indexed objects nothing refers to, garbage that a collection removes
// (and a pack none of whose objects was indexed yet, a dead pack); the
// caller's shared lock keeps a collection from running before its last
// commit. Such a Writer keeps at most a few MiB of its packs' tables in
// memory and reads the others back from the packs at its commit.
//
// Inline packs: a Writer told to (Writer.SetInline, a store in a
// directory's turns) keeps a pack of at most that many bytes in memory
// instead of creating a file, and its Commit stores the pack's bytes in the
// object index itself (IndexWriter.AddInlinePack; PackInfo.Inline marks its
// record), in the same write transaction as the index entries and records
// that refer to them: that transaction's commit is the turn's only
// durability barrier, and a crash before it leaves nothing at all. An
// inline pack is a pack like any other (same format, same table): Store
// reads it through Index.InlinePack, a Sweep rewrites it, and deleting its
// record (DeletePack) deletes its bytes in the same transaction. So that
// inline packs do not grow the database without bound, Fold copies the
// inline packs' objects, as they are stored, into one new file pack, made
// durable (fsync, directory fsync) before the transaction that points
// their index entries at it and deletes the inline packs: a crash in
// between leaves an unreferenced file pack, the next sweep's to delete.
// A store in a bucket never writes inline packs: other machines read the
// packs from the bucket, and a PUT is its barrier anyway.
//
// Caveats:
//   - The package takes no locks. Callers hold the store lock (shared while
//     writing or reading, exclusive while deleting) and pass the object
//     index of their transaction in; see the root package.
//   - Get verifies every object against its ID and returns ErrCorrupt on a
//     mismatch; it never returns unverified bytes.
package cas
