// Package index keeps casckpt's records in the store's bbolt database:
// projects, each project's snapshots, each project's stat cache, and a few
// store-wide settings. The object index of package cas lives in the same
// database, so one transaction commits new objects together with the
// snapshot that refers to them.
//
// Vocabulary:
//   - A project is a working directory, named by its absolute,
//     symlink-resolved path (the workdir).
//   - A snapshot record names a root tree, its time and reason, whether it is
//     pinned, and statistics. Records are numbered per project in creation
//     order (Seq); the snapshot ID is a hash of the record's content.
//   - The stat cache maps each captured file's path to the metadata it had
//     when last hashed and the chunk IDs of its content, so an unchanged
//     file is recognised by lstat alone. Entries recorded too close to the
//     scan's start are "racily clean" and are re-hashed (see Trusted).
//
// Buckets: "meta" (schema version and settings), "projects",
// "snapshots"/<workdir>/<seq>, "statcache"/<workdir>/<path>.
//
// Caveats: the database is opened with a timeout and must be held briefly;
// bbolt allows one read-write opener at a time across processes. Every
// decoder rejects malformed records with ErrCorrupt instead of panicking.
package index
