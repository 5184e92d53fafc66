// Package scan walks a working directory the way a snapshot sees it: it
// applies the exclusions, reuses the stat cache for unchanged files, hashes
// and stores the rest in parallel, and builds the manifest trees.
//
// Scan is List, the walk, which needs no store (a snapshot lists its tree
// while it waits for the store: a bucket's listings), then the Listing's
// Store, which reads what the stat cache cannot vouch for and stores it,
// building the trees bottom-up as it goes: each directory's once its
// files are read, after which its entries are dropped (unless
// Options.KeepTree), so a big tree's entries are not all held to the end.
//
// Vocabulary:
//   - The walk opens every directory and file beneath the project's root
//     (openat2 with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, or one component at
//     a time without following links on older kernels), so nothing outside
//     the project is ever read.
//   - Excluded entries (ignored by .gitignore or the built-in patterns, over
//     the size limit, unreadable) are reported in Result.Excluded; a
//     restore never touches them. The built-in patterns (DefaultExcludes)
//     yield to a .gitignore negation and to the project's git index
//     (package gitindex, read only when a pattern matches).
//   - Unreadable entries (a file, link or directory there but not
//     readable) are also kept in the tree as manifest.KindUnreadable, so
//     that a later diff, restore or undo does not take them as deleted.
//   - Options.Capture captures entries a rule or the size limit would
//     exclude all the same, one by one: a restore's scan takes what the
//     restore will write over.
//   - Result.Stamp is a captured file's stamp as the scan saw it, to tell
//     a file changed since the scan from one that is not (a scan with
//     Options.KeepTree: a restore's).
//   - A file whose stat cache stamp (package statcache) is unchanged takes
//     its chunks from the cached tree without being read; a directory whose
//     entries are all unchanged is its cached tree.
//   - Leftovers are temporary files of killed restores (manifest.IsTemp),
//     never captured; the caller removes them.
//
// Caveats: a file that changes while read is read again; one that keeps
// changing or becomes something else is left out with a warning. A store
// error fails the scan; a file's own read error only leaves the file out.
package scan
