// Package packtest checks implementations of cas.PackStore: Run is the
// conformance suite every pack store passes (as restic's
// internal/backend/test and kopia's blobtesting do for theirs), and Faulty
// wraps any pack store to fail a chosen operation with a chosen error.
//
// Vocabulary:
//   - A store under test is made empty and fresh for each test by the
//     newStore function given to Run.
//   - An Op names one kind of call: a store method (OpCreate, OpList...), a
//     pack writer's (OpWrite, OpClose, OpAbort) or a pack reader's
//     (OpReadAt).
//   - A Fault says which call fails: the n-th call of one Op, or of any, or
//     every such call, and with which error.
//
// Caveats:
//   - The suite checks what every store must do, not durability: that a
//     synced pack survives a crash of the machine is the implementation's
//     own test to make (the local store checks its fsyncs through its FS).
//   - Faulty fails a call before it reaches the store it wraps; only a
//     failed writer Close also aborts the wrapped writer, since a failed
//     Close must leave nothing stored.
package packtest
