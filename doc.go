// Package casckpt is a git-free undo for the files an AI coding agent
// touches: a content-addressed checkpoint store that snapshots a working
// directory once per turn, lists and diffs the snapshots, and restores any
// of them exactly.
//
// A host opens a Store on a directory and calls Snapshot, List, Diff,
// Restore and the rest with a project directory; or it uses a Manager,
// which takes at most one checkpoint per project per conversation turn and
// never fails the caller.
//
// Vocabulary:
//   - A project is a working directory, named by its absolute,
//     symlink-resolved path.
//   - A snapshot is a record pointing at a manifest tree (package manifest)
//     whose file contents are chunks in the object store (package cas).
//   - A reference (Ref) names a snapshot of a project: its full 64-digit ID,
//     a unique hex prefix of at least 4 digits, or @N, the N-th newest.
//   - A turn is one turn of an agent in a project, named by the host: the
//     snapshot it began on and the one it ended on. What changed between
//     them is the agent's; what changed between turns is someone else's.
//     Snapshots carry the host's session and turn labels. Undo reverts
//     one turn and keeps what was done since, merging text files changed
//     since (three-way, as git revert does).
//   - The write ledger records what an agent wrote, path by path, for
//     hosts that hook their write tools rather than their turns.
//   - SessionTurns lists a session's turns in every project, so that a
//     host keeping no state between processes (the command's Claude Code
//     hook) finds its newest turn and where it started from the store.
//
// Layout: this package holds the use cases, each a short orchestration in
// a file of its own (snapshot.go, restore.go, undo.go, diff.go, gc.go,
// prune.go, sizecap.go, verify.go, repair.go, import.go); their machinery
// lives below it: repo (the Backend seam: a store in a directory,
// repo.Local, or in a bucket, repo/bucket; the use cases ask its
// Features where the two differ, never which one they run on), index
// (the database), cas (objects and packs), manifest (trees), gc
// (retention and marking), internal/scan (the tree walk),
// internal/restorer (plan and writes), internal/undo (the plan of an
// undo) and internal/textdiff (diffs and the three-way merge).
//
// Concurrency: several processes and goroutines may use one store. Every
// operation holds a kernel flock on the store's lock file, shared for
// snapshot, restore and reads, exclusive for garbage collection, so the
// lock vanishes with a process that dies. The database is opened per
// transaction with a timeout and held only briefly.
//
// Durability: each snapshot's data and a backup of its record are written
// and synced to a pack before the one database commit that records it, so
// a crash leaves old or new, never half. The database can be rebuilt from
// the packs alone (Repair) when it is damaged or lost.
//
// Caveats: modification times, owners and permission bits other than the
// executable bit are not recorded. Special files (sockets, FIFOs, devices)
// are never captured nor touched.
package casckpt
