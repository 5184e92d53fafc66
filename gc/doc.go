// Package gc decides what casckpt's store may forget and finds what it no
// longer needs.
//
// Vocabulary:
//   - A Graph is the reference graph of the objects reachable from a set of
//     snapshot roots, with a count of live referrers per object: the mark
//     phase of mark-and-sweep. Each tree is read once, however many
//     snapshots share it. Releasing a root frees what only it reached,
//     which lets the size cap know exactly how much each dropped snapshot
//     returns before anything is deleted.
//   - A Policy is the retention rules (keep the newest N, drop orphan and
//     stale projects); PlanRetention applies one to snapshot records and
//     returns a Plan, as a pure function; PlanCap extends a plan until the
//     store fits its size cap.
//   - A project's State says whether its directory is there (Live), was
//     observably deleted (Orphan) or is out of sight (Unreachable); the
//     caller observes it, the policy only reads it.
//
// The sweep itself (deleting objects from the index, repacking, deleting
// pack files) is cas.PrepareSweep; the root package runs it under the
// store's exclusive lock.
//
// Caveats: Mark fails on a missing or corrupt tree rather than guess what
// it referred to, so garbage is never collected past a damaged snapshot
// until that snapshot is forgotten.
package gc
