// Package packstore holds the implementations of cas.PackStore, the seam
// through which casckpt stores pack bytes. Local keeps packs as files in one
// directory, as the store always has.
//
// Vocabulary:
//   - A pack is a file "<32 hex digits>.pack" in the directory, written once.
//   - A temporary pack ("<TempPrefix><32 hex digits>") is a pack being
//     written; a writer killed before Close leaves it behind, and
//     RemoveIncomplete deletes it.
//   - A pack set aside is renamed "<name>.damaged" and left for the user.
//   - FS is the file system the writes, renames, removals and directory
//     syncs go through: OS, or in tests one that fails on demand.
//
// Write order (restic's internal/backend/local): create the temporary pack
// in the directory, write, fsync, close, rename it to its name; Sync fsyncs
// the directory once for all the packs closed before it. On any error the
// temporary pack is removed.
//
// Caveats:
//   - Local takes no locks. A writer's temporary file is named after its
//     pack and created exclusively, so a second writer of a name is refused
//     while the first is at work, in any process, and a pack that exists at
//     Create or just before the rename is never replaced. A temporary pack
//     that a killed writer left keeps its name refused until
//     RemoveIncomplete (cas names packs by 128 random bits: it never asks).
//   - Reads go straight to the os package, not through FS: the fault seam
//     covers what changes the directory.
//   - NewLocal creates nothing. Create fails while the directory is missing;
//     the caller makes it.
package packstore
