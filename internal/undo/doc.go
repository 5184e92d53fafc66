// Package undo plans the revert of one agent turn in a working tree that
// may have changed since, keeping everything done after the turn, as git
// revert does for a commit.
//
// Vocabulary:
//   - The three trees: S, the turn's start; E, its end; W, the working
//     tree now (a scan of it). The paths the turn changed are those that
//     differ between S and E (manifest.Diff), directories added or
//     deleted with everything below them.
//   - A state is what a tree holds at a path: nothing, or a file (bytes
//     and executable bit), a link (its target) or a directory (its kind
//     alone: what is inside is the business of the paths below).
//   - A path is reverted when W holds it as E does: it goes back to S's
//     state (rewritten, re-created or deleted); or when W already holds
//     S's state (then nothing is written). A directory the turn made, or
//     made of a file, is deleted only when everything in it is deleted.
//   - A path is merged when S, E and W all hold text files there and the
//     three-way merge of their lines (textdiff.Merge: base E, ours W,
//     theirs S) is clean: the merged bytes are written, with the
//     executable bit merged the same way (S's when W kept E's, else W's).
//   - Every other path the turn changed is a conflict, left alone and
//     reported with its reason: a binary file or a link changed since,
//     kinds that differ, a path deleted on one side and changed on the
//     other, lines both changed, a path excluded from W (ignored, too
//     large, unreadable), a path whose directory is gone or left alone.
//   - A Plan is the reverted, merged and conflicting paths and the
//     restorer.Plan of the writes that carry it out; Plan.Content layers
//     the merged content, held in memory, over the store, to serve every
//     chunk those writes need.
//
// NewPlan writes nothing. The caller verifies the plan (restorer.Verify
// over Plan.Content of the store) and applies it with restorer.Apply, the writer a
// restore uses: every file is a new temporary file, synced and renamed
// over its path. Merged content is made only from verified bytes: S's and
// E's read from the store, W's read from the working tree and checked
// against the chunks the scan hashed (a file changed since the scan is a
// conflict).
//
// Caveats: merged files are held in memory until the plan is applied.
// Directories are never merged: a directory left alone because of what it
// holds is reported once, and the paths below it that needed it are
// reported as being in it. A file changed between the plan and its write
// is replaced all the same, as in a restore: the caller's pre-undo
// snapshot is what keeps it.
package undo
