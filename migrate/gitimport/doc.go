// Package gitimport imports the histories of git repositories into a
// casckpt store: every commit becomes a snapshot of its project. It is the
// generic half of a migration from an agent that kept its checkpoints in
// git ("shadow repositories"); the agent's own half, which knows where the
// repositories are and which project each history belongs to, is a
// Finder in a small package beside this one, under migrate/.
//
// It reads git repositories in pure Go (go-git's storage and plumbing
// packages, loose and packed objects, loose and packed refs): no git
// program is needed, and the repositories are never written to.
//
// # Vocabulary
//
//   - A source (Source) is one git repository. Its projects (Project) are
//     the histories it holds, each named by the project's directory (the
//     workdir) as the agent recorded it, and by the references that hold
//     it. References that belong to no project are the source's Unowned.
//   - A unit (Unit) is what is deleted whole once imported: one source, or
//     a directory of them. Status reports units and Clear deletes them.
//   - A Finder lists the candidate units and reads each: which sources it
//     holds, their references (ReadRefs) and which project each belongs
//     to (NewProject). Everything that is not git lives there.
//   - A project's history is every commit reachable from its references.
//     Each commit becomes one snapshot, recorded oldest first: the commit's
//     author time (a history rewritten by a tool that kept author dates
//     carries the rewrite's time as committer time), the first line of its
//     message as reason, and exactly its files (bytes as the commit holds
//     them), executable bits and symbolic links. Directories exist only
//     where they hold something, as in git.
//   - A commit's origin, "git:<commit>:<workdir>", with the workdir as the
//     source records it, is what makes an import idempotent: Store.Import
//     skips origins it has recorded, so a second run imports nothing and a
//     commit found in two copies of a repository is imported once.
//   - A unit is migrated when every commit reachable from every reference
//     of every source in it (HEAD included) has been imported, and nothing
//     in it is unreadable.
//
// # Writing a reader for another agent
//
// A reader for another agent's shadow repositories (migrate/hermes,
// migrate/cline, migrate/roo, migrate/gemini) is one small package,
// migrate/<agent>, over this one. A reader may set a project's Agent
// (reasons name the agent, empty commits record no snapshot) and Label
// (each commit's session and turn, from the agent's own records). It implements
// Finder: Candidates lists the directories where the agent keeps its
// repositories; Read probes one (IsGitDir), reads its references with
// ReadRefs, learns from the agent's own files which workdir each history
// belongs to (CleanWorkdir checks it), and returns the unit with a Source
// whose Projects come from NewProject. What cannot be read goes in
// Problems, never in an error, so that the unit is kept. The package then
// offers Run, Status and Clear over its Finder; cmd/casckpt gives it the
// directory, which only cmd may read from the environment. In outline, for
// an agent that keeps one repository per project, <dir>/<id>/.git:
//
//	type finder struct{ dir string }
//
//	func (f finder) Candidates() ([]string, error) {
//		// the directories directly under f.dir; none if it is missing
//	}
//
//	func (finder) Read(p string) (gitimport.Unit, bool) {
//		gitDir := filepath.Join(p, ".git")
//		if !gitimport.IsGitDir(gitDir) {
//			return gitimport.Unit{}, false
//		}
//		s := &gitimport.Source{Path: gitDir, Dir: p, Unit: p}
//		refs, err := gitimport.ReadRefs(gitDir)
//		workdir, werr := gitimport.CleanWorkdir(readWorkdir(p)) // the agent's record
//		switch {
//		case err != nil:
//			s.Problems = append(s.Problems, fmt.Sprintf("%s: %v", gitDir, err))
//		case werr != nil:
//			s.Problems = append(s.Problems, fmt.Sprintf("%s: %v", p, werr))
//			s.Unowned = refs
//		case len(refs) > 0:
//			s.Projects = append(s.Projects, gitimport.NewProject(workdir, refs))
//		}
//		return gitimport.Unit{Path: p, Sources: []*gitimport.Source{s}}, true
//	}
//
//	func Run(ctx context.Context, store gitimport.Importer, dir string, opts gitimport.Options) (gitimport.Report, error) {
//		return gitimport.Run(ctx, store, finder{dir}, opts)
//	}
//
// # Caveats
//
//   - Submodule entries (gitlinks) have no content in the repository: they
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
//     its commit damaged (below). No object is inflated past the size its
//     header declares (a zlib bomb: a few hundred KiB that declare 10
//     bytes and inflate to gigabytes): loose objects and packed ones that
//     are not deltas are read by this package, bounded; the streams of a
//     delta chain are each checked, to nowhere, before go-git rebuilds the
//     delta.
//   - Should a repository hold a merge or a second branch, every
//     reachable commit is imported, parents before children, so that the
//     unit can become migrated.
//   - An unowned reference cannot be imported: its unit is never migrated
//     unless a project holds its commits.
//   - A commit whose objects are missing or damaged is reported and left
//     out; the project's other commits are imported. A project or
//     repository that cannot be read is reported and skipped. Either keeps
//     its unit from being migrated, so Clear keeps it.
//   - Snapshots are listed by time (index.Snapshots), so a history imported
//     after casckpt's own newer snapshots of the project is listed, and
//     dropped by retention, before them.
//   - A rewritten history whose kept commits carry the rewrite's time as
//     author time too imports with that time: the original times are gone
//     from the repository. The order is still the history's.
//   - A project's Created time is kept; the import itself counts as a
//     touch (Store.Import), so a freshly imported old project is not stale
//     for casckpt prune, which would drop it and then let Clear delete its
//     source.
//   - Clear reads each unit again just before deleting it, but it cannot
//     stop the agent from writing meanwhile.
//   - SHA-256 repositories and objects/info/alternates with relative paths
//     are not supported.
package gitimport
