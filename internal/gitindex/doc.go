// Package gitindex reads which paths a git repository's index
// (.git/index) tracks, in pure Go and without the git program: a path the
// project's own git index tracks is never left out by the scan's default
// exclude list (a build/ or dist/ directory that is real source).
//
// Vocabulary:
//   - The index is found as git finds it: in the .git directory of the
//     project or of its nearest ancestor that has one, or where a .git
//     file ("gitdir: PATH", as worktrees and submodules have) points.
//   - Tracked paths are those of the index's entries, relative to the
//     project directory (entries outside it are dropped); a directory is
//     tracked when a tracked path lies below it.
//
// Caveats: index versions 2, 3 and 4 are read, with SHA-1 or SHA-256
// object names; a split index (the "link" extension, core.splitIndex) or
// any other required extension this package does not know is an error,
// since its entries are not all in the file. The caller treats every
// error as "nothing is tracked". Only names are read; stat data, object
// names and stages are skipped, and the optional extensions are ignored.
package gitindex
