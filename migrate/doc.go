// Package migrate imports the checkpoints of legacy Hermes git stores into
// a casckpt store. It reads git repositories in pure Go (go-git's storage
// and plumbing packages, loose and packed objects, loose and packed refs):
// no git program is needed, and the sources are never written to.
//
// # Vocabulary
//
//   - The source directory is where Hermes kept its checkpoints
//     ($HERMES_HOME/checkpoints, else ~/.hermes/checkpoints; only the
//     command reads the environment, this package is given the directory).
//   - A legacy repository (Source) is one git repository found there, of
//     one of two kinds. The shared store (KindShared) is store/, a bare
//     repository whose refs/hermes/<hash> each hold one project's history
//     and whose projects/<hash>.json name the project's workdir. A shadow
//     repository (KindShadow) is <hash>/ from before the shared store: one
//     project, named by its HERMES_WORKDIR file, its history on the current
//     branch (any name); the repository is either the directory itself (a
//     bare layout) or its .git subdirectory.
//   - A unit is a top-level entry of the source directory: store/, a
//     <hash>/ shadow repository, or a legacy-<timestamp>/ directory into
//     which the Hermes upgrade moved either kind. Status reports units
//     (Legacy) and ClearLegacy deletes them whole.
//   - A project's history is every commit reachable from its references.
//     Each commit becomes one snapshot, recorded oldest first: the commit's
//     author time (Hermes sets author and committer time alike, but a
//     history rewritten by a prune that kept author dates carries the
//     prune's time as committer time), the first line of its message as
//     reason, and exactly its files (bytes as the commit holds them),
//     executable bits and symbolic links. Directories exist only where
//     they hold something, as in git.
//   - A commit's origin, "git:<commit>:<workdir>", with the workdir as the
//     source records it, is what makes an import idempotent: Store.Import
//     skips origins it has recorded, so a second run imports nothing and a
//     commit found in two copies of a repository is imported once.
//   - A unit is migrated when every commit reachable from every reference
//     of every repository in it (HEAD included) has been imported, and
//     nothing in it is unreadable.
//
// # Caveats
//
//   - Submodule entries (gitlinks) have no content in a legacy store: they
//     are left out and counted (Report.GitlinksSkipped). So are names
//     casckpt cannot hold (manifest.ValidName: longer than 255 bytes, say),
//     .git entries, and links whose target is empty or longer than
//     manifest.MaxTargetLen (Report.NamesSkipped). A directory left empty
//     by these omissions is left out too.
//   - Commits are imported as they are: CRLF text, LFS pointer files and
//     signatures are kept as bytes, never converted; no exclusion rule
//     applies. The size limits of snapshots do (Options): a file larger
//     than MaxFileSize is left out unread (Report.FilesTooLarge), and a
//     commit of more than MaxFiles files, counted as its trees are read
//     (a tree bomb naming 2^30 paths fails after a few reads), is not
//     imported.
//   - Every object read is checked against its SHA-1 name; an object that
//     does not match, or a tree nested deeper than any path can be, makes
//     its commit damaged (below).
//   - Hermes never merges or branches, but should a repository hold a
//     merge or a second branch, every reachable commit is imported,
//     parents before children, so that the unit can become migrated.
//   - A reference whose project is unknown (a refs/hermes/<hash> without
//     its projects/<hash>.json, a shadow repository without HERMES_WORKDIR,
//     any other ref of the shared store) cannot be imported: Run reports
//     it, and its unit is never migrated unless another project holds its
//     commits.
//   - A commit whose objects are missing or damaged is reported and left
//     out; the project's other commits are imported. A project or
//     repository that cannot be read is reported and skipped. Either keeps
//     its unit from being migrated, so ClearLegacy keeps it.
//   - Snapshots are listed by time (index.Snapshots), so a history imported
//     after casckpt's own newer snapshots of the project is listed, and
//     dropped by retention, before them.
//   - A pruned history whose rewrite gave the kept commits the prune's time
//     as author time too imports with that time: the original times are
//     gone from the repository. The order is still the history's.
//   - Project records' created_at is kept; the import itself counts as a
//     touch (Store.Import), so a freshly imported old project is not
//     stale for casckpt prune, which would drop it and then let
//     clear-legacy delete its source.
//   - ClearLegacy reads each unit again just before deleting it, but it
//     cannot stop Hermes from writing meanwhile: do not run it while Hermes
//     takes checkpoints in the same directory.
//   - Hidden entries and symbolic links directly under the source directory
//     are not looked into (Hermes keeps its lock and marker files there).
//   - SHA-256 repositories and objects/info/alternates with relative paths
//     are not supported (Hermes makes neither).
package migrate
