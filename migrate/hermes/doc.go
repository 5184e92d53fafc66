// Package hermes finds the checkpoints of legacy Hermes git stores, for
// gitimport to import into a casckpt store. It is the Hermes reader: it
// knows where Hermes kept its repositories, which project each history
// belongs to, and what may be deleted whole; reading git and turning
// commits into snapshots is gitimport's. A reader for another agent
// (Cline, Roo, Gemini CLI) is a package like this one: a gitimport.Finder
// and Run, Status and Clear over it (see gitimport's documentation).
//
// # Vocabulary
//
//   - The source directory is where Hermes kept its checkpoints
//     ($HERMES_HOME/checkpoints, else ~/.hermes/checkpoints; only the
//     command reads the environment, this package is given the directory).
//   - A legacy repository (a gitimport.Source) is one git repository found
//     there, of one of two kinds. The shared store (KindShared) is store/,
//     a bare repository whose refs/hermes/<hash> each hold one project's
//     history and whose projects/<hash>.json name the project's workdir
//     (its created_at and last_touch become the project's times). A shadow
//     repository (KindShadow) is <hash>/ from before the shared store: one
//     project, named by its HERMES_WORKDIR file, its history on the current
//     branch (any name) and every other ref; the repository is either the
//     directory itself (a bare layout) or its .git subdirectory.
//   - A unit (a legacy store) is a top-level entry of the source
//     directory: store/, a <hash>/ shadow repository, or a
//     legacy-<timestamp>/ directory into which the Hermes upgrade moved
//     either kind. Status reports units and ClearLegacy deletes them whole.
//
// # Caveats
//
//   - A reference whose project is unknown (a refs/hermes/<hash> without
//     its projects/<hash>.json, a shadow repository without HERMES_WORKDIR,
//     any other ref of the shared store) cannot be imported: Run reports
//     it, and its unit is never migrated unless another project holds its
//     commits.
//   - Hermes writes project records with Python's json: a workdir that is
//     not UTF-8 comes as \udcXX escapes and is read back as its bytes
//     (casckpt.JSONPath).
//   - Hermes never merges or branches, and sets author and committer time
//     alike; a history its prune rewrote carries the prune's time as
//     committer time, or as author time too (gitimport's caveats say what
//     is imported then).
//   - ClearLegacy reads each unit again just before deleting it, but it
//     cannot stop Hermes from writing meanwhile: do not run it while Hermes
//     takes checkpoints in the same directory.
//   - Hidden entries and symbolic links directly under the source directory
//     are not looked into (Hermes keeps its lock and marker files there).
package hermes
