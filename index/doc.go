// Package index keeps casckpt's records in the store's bbolt database, and
// is the only package that knows bbolt: projects, each project's snapshots
// and stat cache, the object index of package cas, tombstones, import
// origins and a few store-wide settings. One transaction commits new
// objects together with the snapshot that refers to them.
//
// Use: Open names the database file; View, Update and DryRun each open it,
// run a function in one transaction and close it, so no process holds it
// between operations. The function gets a Tx whose typed accessors read
// and write records; every byte encoding stays in this package.
//
// Vocabulary:
//   - A project is a working directory, named by its absolute,
//     symlink-resolved path (the workdir).
//   - A snapshot record names a root tree, its time and reason, whether it
//     is pinned, statistics, and what the snapshot added to the store
//     (Added: the packs it wrote). Records are numbered per project in
//     creation order (Seq); the snapshot ID is a hash of what identifies it
//     and a nonce.
//   - A record backup is a snapshot record stored as an object in the
//     packs beside the snapshot's data (EncodeBackup), from which Repair
//     rebuilds a lost database; it is written before the packs are, so
//     it lacks Added (a bucket's commit, written after, has it). A
//     tombstone marks the backup of a deleted
//     snapshot, so a repair does not bring the snapshot back.
//   - The stat cache keeps, per project directory, what package statcache
//     defines, so an unchanged file is recognised by lstat alone.
//   - The count cache keeps the change counts (files changed, lines
//     inserted and deleted) from one tree to another, by the pair of tree
//     IDs; garbage collection drops an entry with either tree.
//   - The object index maps an object ID to its pack and offset, and a pack
//     number to the pack's name and size (cas.IndexWriter), and keeps the
//     bytes of inline packs (a turn's small pack, committed with its
//     records: see package cas), in pieces of a page's size, which raise
//     the schema to SchemaInlinePieces.
//
// Buckets: "meta" (schema version, chunker, settings), "projects",
// "snapshots"/<workdir>/<seq>, "statcache"/<workdir>/<dir>, "objects",
// "packs", "inline" (inline packs' bytes, by pack number), "dropped"
// (tombstones), "origins", "counts"/<from><to>.
//
// Schema versions: a database records the lowest version that reads all it
// holds (see SchemaBase, SchemaInline, SchemaInlinePieces). A new one starts at SchemaBase; the
// write that first stores what an older casckpt would misread raises it,
// and a casckpt refuses a database of a version above its SchemaVersion.
//
// Caveats:
//   - The database is opened with a timeout and must be held briefly;
//     bbolt admits one writer at a time across processes.
//   - A bbolt panic or memory fault on a damaged page fails the
//     transaction with ErrDamaged (the guard covers fn's goroutine and the
//     object index's lookups from any goroutine), never the process.
//   - Every decoder rejects malformed records with ErrCorrupt instead of
//     panicking; ReadRemains reads what it can of a damaged database.
package index
