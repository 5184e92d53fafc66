// Package migrate imports the checkpoints of legacy Hermes git shadow
// stores into a casckpt store, reading git objects in pure Go (go-git's
// storage and plumbing packages): no git program is needed.
//
// Vocabulary:
//   - A source directory is where Hermes kept its checkpoints
//     ($HERMES_HOME/checkpoints, else ~/.hermes/checkpoints).
//   - A legacy repository is one git repository found there: the shared
//     store (store/, a bare repository whose refs/hermes/<hash> name each
//     project's history and whose projects/<hash>.json name its workdir), a
//     per-directory shadow repository from before it (<hash>/, with a
//     HERMES_WORKDIR file and the history on its current branch), or either
//     of those under legacy-<timestamp>/.
//   - Each commit becomes one snapshot of its project, oldest first, with the
//     commit's committer time, the first line of its message as reason, and
//     exactly its files, executable bits and symbolic links. Its origin,
//     "git:<commit>:<workdir>", makes a second import of it a no-op.
//
// Caveats:
//   - Submodule entries (gitlinks) have no content in the store: they are
//     skipped and counted. So are names casckpt cannot hold (see
//     manifest.ValidName).
//   - Only the first-parent chain of each tip is imported; Hermes never
//     merges.
//   - Sources are opened read-only and never changed; a damaged repository
//     or project is reported and skipped, and the rest still imports.
package migrate
