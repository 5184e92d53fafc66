// Package restorer writes snapshot trees out: into a project directory,
// replacing only what differs (a restore), or into a tar archive (an
// export). It plans first and then applies, so everything a restore will
// read can be checked before anything is changed.
//
// Vocabulary:
//   - A Plan is the changes (manifest.Change) that make a current tree
//     equal to a target tree, in manifest.Diff order (parents before their
//     children), less the Skipped paths an excluded entry is in the way
//     of, with the counts of files and links to write and delete. NewPlan
//     builds one from a diff; PlanTree builds the plan that writes a whole
//     tree into nothing.
//   - Safe narrows a plan to what agents changed: a path is restored when
//     its current state (manifest.Entry.StateID) is one an agent left it
//     in, and Kept with a reason otherwise; directories follow what they
//     hold, so a kept path is never deleted with its directory.
//   - Verify reads every chunk a plan writes, once, so a damaged store
//     refuses the restore before anything is touched.
//   - Apply carries a plan out on an FS, the narrow view of a directory a
//     restore needs. RootFS is the real one, over an *os.Root, so no link
//     in the tree can lead a write outside the directory. With
//     Options.SameFile it checks each path right before it changes it,
//     and leaves alone one that changed since the plan's scan
//     (ReasonChangedDuring); Plan.Without is then what was done.
//   - A temporary file is a new file written beside its target and renamed
//     over it (named by manifest.TempName); a leftover is one a killed
//     restore left, which RemoveLeftovers deletes unless a live restore
//     holds it locked.
//   - Export writes a plan of additions (a PlanTree) as a PAX tar archive.
//
// Caveats: the check before each change compares what lstat says with the
// scan (for a file, through SameFile): an edit that keeps size, times,
// inode and mode, within one tick of the file system's clock, is not seen,
// and one made between the check and the rename (microseconds) is
// overwritten. A restore is atomic per file, not as a whole: every file and
// link is replaced by a rename, so a crash leaves each path old or new, but
// an error part way leaves some paths restored and others not (the caller
// keeps a snapshot of the tree from before to undo it). Only the
// executable bit of a mode is restored: files and directories are created
// with 0666 or 0777 less the umask, as git creates them; owners and times
// are not restored. A directory to be deleted that still holds entries the
// plan does not name (excluded ones) is left in place. A plan holds one
// Change per path it writes, so a large tree is held in memory (at most
// manifest.MaxEntries of them).
package restorer
