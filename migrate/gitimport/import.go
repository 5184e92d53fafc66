package gitimport

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/cas"
)

// Options tune Run. The zero value means the defaults.
type Options struct {
	// Progress, if set, is called on Run's goroutine as commits are
	// handled, with the number handled so far and the number found in all
	// sources (which never changes during a run). done only grows; the last
	// call has done == total.
	Progress func(done, total int)
	// MaxFiles refuses a commit of more files (default 50,000, as for a
	// snapshot); MaxFileSize leaves out larger files (default 10 MiB),
	// without reading them.
	MaxFiles    int64
	MaxFileSize int64
}

// withDefaults fills in the zero fields.
func (o Options) withDefaults() Options {
	if o.MaxFiles <= 0 {
		o.MaxFiles = 50_000
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = 10 << 20
	}
	return o
}

// Report says what Run did.
type Report struct {
	// Projects counts the distinct projects (workdirs) with at least one
	// commit now imported, whether by this run or an earlier one.
	Projects          int
	SnapshotsImported int
	// SnapshotsSkipped counts commits imported before: by an earlier run,
	// or earlier in this one from another copy of the same repository.
	SnapshotsSkipped int
	// SnapshotsUnchanged counts the empty commits of a Project.Agent
	// history, which record no snapshot.
	SnapshotsUnchanged int
	// Errors describe, one line each, what could not be read or imported;
	// everything else was imported. Never nil.
	Errors []string
	// GitlinksSkipped counts submodule entries, whose content the source
	// repository does not hold, and NamesSkipped entries casckpt cannot hold (see
	// manifest.ValidName; also .git entries and empty or oversized link
	// targets), each summed over the snapshots imported.
	GitlinksSkipped int
	NamesSkipped    int
	// FilesTooLarge counts the files left out because they are larger than
	// Options.MaxFileSize, summed over the snapshots imported.
	FilesTooLarge int
	// Sources details every repository found, ordered by Path.
	Sources []SourceReport
}

// SourceReport is what Run did with one repository.
type SourceReport struct {
	Path     string // the git directory
	Unit     string // see Source.Unit
	Kind     Kind
	Projects []ProjectReport
	// Errors are this repository's problems, also listed in Report.Errors.
	Errors []string
}

// ProjectReport is what Run did with one project of a repository.
type ProjectReport struct {
	Workdir  string
	Commits  int // reachable from the project's references
	Imported int
	Skipped  int // imported before
	// Unchanged counts empty commits, which record no snapshot (see
	// Project.Agent).
	Unchanged int
	// Failed counts commits that were not imported: unreadable ones (named
	// in Errors), or all the remaining ones when the store failed.
	Failed          int
	GitlinksSkipped int
	NamesSkipped    int
	FilesTooLarge   int
}

// origin names a commit of a project for Store.Import. It depends only on
// the commit and the workdir the source records, so the same commit found
// in two copies of a repository imports once.
func origin(workdir string, commit plumbing.Hash) string {
	return "git:" + commit.String() + ":" + workdir
}

// job is one project of one repository to import.
type job struct {
	src     *Source
	proj    *Project
	rep     *ProjectReport
	srep    *SourceReport
	commits []*commit
}

// Importer is what an import needs of a casckpt store: *casckpt.Store
// implements it. Import records a project's imported snapshots in one
// commit; Imported reports which origins have been imported.
type Importer interface {
	Import(ctx context.Context, p casckpt.ImportProject) (casckpt.ImportResult, error)
	Imported(ctx context.Context, origins []string) (map[string]bool, error)
}

var _ Importer = (*casckpt.Store)(nil)

// Run imports every commit of every repository that f finds that is not
// imported yet: each project's history, oldest first, becomes snapshots of
// the project, with the commit's author time, its message's first line as
// reason and exactly its files, executable bits and symbolic links. It
// never writes to the repositories and needs no git program.
//
// What cannot be read (a repository, a project, a commit) is reported in
// Report.Errors and skipped; the rest is still imported, and so is
// another project when one fails to import. Run returns an error, with the
// report of what was done, only when f's Candidates fails, ctx ends, or
// the store is busy (casckpt.ErrBusy) or damaged (casckpt.ErrDatabase).
func Run(ctx context.Context, store Importer, f Finder, opts Options) (Report, error) {
	opts = opts.withDefaults()
	rep := Report{Errors: []string{}, Sources: []SourceReport{}}
	units, err := Scan(f)
	if err != nil {
		return rep, err
	}
	var sources []*Source
	for _, u := range units {
		rep.Errors = append(rep.Errors, u.Problems...)
		sources = append(sources, u.Sources...)
	}
	slices.SortFunc(sources, func(a, b *Source) int { return strings.Compare(a.Path, b.Path) })
	rep.Sources = make([]SourceReport, len(sources))

	// Read every history first: the total for progress, and the order.
	var jobs []*job
	total := 0
	for i, s := range sources {
		srcJobs, n := readSource(s, &rep.Sources[i])
		jobs = append(jobs, srcJobs...)
		total += n
	}
	// Per project, the older history first: snapshots of one time are
	// listed in the order they are recorded.
	slices.SortStableFunc(jobs, func(a, b *job) int {
		if c := strings.Compare(a.proj.Workdir, b.proj.Workdir); c != 0 {
			return c
		}
		return a.commits[0].when.Compare(b.commits[0].when)
	})

	err = importJobs(ctx, store, jobs, total, opts)
	rep.sum()
	return rep, err
}

// readSource fills srep, the report of source s, with its projects and
// problems, and reads each project's history: jobs are the projects with
// commits, total the number of their commits.
func readSource(s *Source, srep *SourceReport) (jobs []*job, total int) {
	*srep = SourceReport{Path: s.Path, Unit: s.Unit, Kind: s.Kind, Projects: make([]ProjectReport, len(s.Projects)), Errors: []string{}}
	srep.Errors = append(srep.Errors, s.Problems...)
	if len(s.Projects) == 0 {
		return nil, 0
	}
	err := withObjects(s.Path, func(st *objectReader) error {
		for j := range s.Projects {
			p := &s.Projects[j]
			prep := &srep.Projects[j]
			*prep = ProjectReport{Workdir: p.Workdir}
			commits, problems := history(st, p.tips)
			for _, msg := range problems {
				srep.Errors = append(srep.Errors, fmt.Sprintf("%s: %s: %s", s.Path, p.Workdir, msg))
			}
			prep.Commits = len(commits)
			total += len(commits)
			if len(commits) > 0 {
				jobs = append(jobs, &job{src: s, proj: p, rep: prep, srep: srep, commits: commits})
			}
		}
		return nil
	})
	if err != nil {
		srep.Errors = append(srep.Errors, fmt.Sprintf("%s: %v", s.Path, err))
	}
	return jobs, total
}

// importJobs imports the jobs in order, reporting progress against total.
// A project that fails to import is named in its source's errors and the
// others go on; it returns an error only when ctx ends or the store itself
// fails (busy or damaged).
func importJobs(ctx context.Context, store Importer, jobs []*job, total int, opts Options) error {
	prog := &progress{fn: opts.Progress, total: total}
	prog.report(0)
	done := 0
	for _, j := range jobs {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := withObjects(j.src.Path, func(st *objectReader) error {
			return importJob(ctx, store, st, j, opts, func(pos int) { prog.report(done + pos) })
		})
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, casckpt.ErrBusy) || errors.Is(err, casckpt.ErrDatabase):
			// The store itself fails: every other project would too.
			return fmt.Errorf("import %s: %w", j.proj.Workdir, err)
		default:
			j.srep.Errors = append(j.srep.Errors, fmt.Sprintf("%s: %s: %v", j.src.Path, j.proj.Workdir, err))
		}
		done += len(j.commits)
		prog.report(done)
	}
	prog.report(total)
	return nil
}

// sum fills the report's totals from its sources.
func (rep *Report) sum() {
	projects := map[string]bool{}
	for _, s := range rep.Sources {
		rep.Errors = append(rep.Errors, s.Errors...)
		for _, p := range s.Projects {
			rep.SnapshotsImported += p.Imported
			rep.SnapshotsSkipped += p.Skipped
			rep.SnapshotsUnchanged += p.Unchanged
			rep.GitlinksSkipped += p.GitlinksSkipped
			rep.NamesSkipped += p.NamesSkipped
			rep.FilesTooLarge += p.FilesTooLarge
			if p.Imported+p.Skipped+p.Unchanged > 0 {
				projects[p.Workdir] = true
			}
		}
	}
	rep.Projects = len(projects)
}

// withRepo opens a repository read-only for fn, turning a panic of the git
// library on malformed data into an error.
func withRepo(gitDir string, fn func(st *filesystem.Storage) error) (err error) {
	st := openRepo(gitDir)
	defer closeRepo(st)
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading the repository failed: %v", r)
		}
	}()
	return fn(st)
}

// importJob imports one project's history. A commit whose objects cannot
// be read is reported and left out: the commits before it are imported,
// then the import goes on after it. Other failures end the job. step is
// called with the position (1-based) of each commit converted.
func importJob(ctx context.Context, store Importer, st *objectReader, j *job, opts Options, step func(pos int)) error {
	created, lastTouch := j.proj.Created, j.proj.LastTouch
	newest := j.commits[len(j.commits)-1].when
	for _, c := range j.commits {
		if c.when.After(newest) {
			newest = c.when
		}
	}
	if created.IsZero() {
		created = j.commits[0].when
	}
	if lastTouch.Before(newest) {
		lastTouch = newest
	}
	byHash := make(map[plumbing.Hash]*commit, len(j.commits))
	for _, c := range j.commits {
		byHash[c.hash] = c
	}
	pending := [][]*commit{j.commits}
	for len(pending) > 0 {
		seg := pending[0]
		pending = pending[1:]
		if len(seg) == 0 {
			continue
		}
		a := &attempt{st: st, opts: opts, bad: -1, step: step}
		imp := casckpt.ImportProject{Workdir: j.proj.Workdir, Created: created, LastTouch: lastTouch,
			Snapshots: make([]casckpt.ImportSnapshot, len(seg))}
		for i, c := range seg {
			imp.Snapshots[i] = j.snapshot(c, byHash, opts)
			imp.Snapshots[i].Build = func(ctx context.Context, put cas.Putter) (cas.ID, int64, int64, error) {
				return a.build(ctx, put, i, c)
			}
		}
		res, err := store.Import(ctx, imp)
		if err == nil {
			j.rep.Imported += res.Imported
			j.rep.Skipped += res.Skipped
			j.rep.Unchanged += res.Unchanged
			j.rep.GitlinksSkipped += a.gitlinks
			j.rep.NamesSkipped += a.badNames
			j.rep.FilesTooLarge += a.tooLarge
			continue
		}
		bad := a.bad
		if ctx.Err() != nil || bad < 0 {
			for _, s := range pending {
				j.rep.Failed += len(s)
			}
			j.rep.Failed += len(seg)
			return err
		}
		j.rep.Failed++
		j.srep.Errors = append(j.srep.Errors, fmt.Sprintf("%s: %s: commit %s (%s, %s): not imported: %v",
			j.src.Path, j.proj.Workdir, seg[bad].hash, seg[bad].when.UTC().Format(time.RFC3339), quote(seg[bad].reason), a.badErr))
		pending = append([][]*commit{seg[:bad], seg[bad+1:]}, pending...)
	}
	return nil
}

// snapshot is the snapshot of commit c of the job, but for its Build:
// its origin, its parent's, and what the project's Agent and Label make of
// it. byHash holds the job's commits.
func (j *job) snapshot(c *commit, byHash map[plumbing.Hash]*commit, opts Options) casckpt.ImportSnapshot {
	p := j.proj
	s := casckpt.ImportSnapshot{Time: c.when, Reason: c.reason, Origin: origin(p.Workdir, c.hash), MaxFileSize: opts.MaxFileSize}
	if len(c.parents) > 0 {
		s.Parent = origin(p.Workdir, c.parents[0])
		if parent, ok := byHash[c.parents[0]]; ok && p.Agent != "" {
			s.Unchanged = parent.tree == c.tree
		}
	}
	if p.Agent != "" {
		s.Reason = "imported from " + p.Agent + ": " + c.reason
	}
	if p.Label != nil {
		s.Session, s.Turn = p.Label(CommitInfo{Hash: c.hash.String(), Message: c.reason, Time: c.when})
	}
	return s
}

// attempt is one Store.Import call for a run of a project's commits.
type attempt struct {
	st   *objectReader
	opts Options
	conv *converter // made on the first build: it must not outlive the Putter
	step func(pos int)
	// bad is the index of the commit whose objects could not be read (-1:
	// none), badErr why.
	bad    int
	badErr error
	// gitlinks, badNames and tooLarge add up what the snapshots built left
	// out.
	gitlinks, badNames, tooLarge int
}

// build is the ImportSnapshot.Build of the i-th commit c. A panic of the
// git library on damaged data counts as a failure to read c.
func (a *attempt) build(ctx context.Context, put cas.Putter, i int, c *commit) (_ cas.ID, _, _ int64, err error) {
	defer func() {
		if r := recover(); r != nil {
			a.bad, a.badErr = i, &sourceError{fmt.Errorf("reading failed: %v", r)}
			err = fmt.Errorf("commit %s: %w", c.hash, a.badErr)
		}
	}()
	if a.conv == nil {
		a.conv = newConverter(a.st, put, a.opts.MaxFiles, a.opts.MaxFileSize)
	}
	r, err := a.conv.root(ctx, c.tree)
	if err != nil {
		if se := (*sourceError)(nil); errors.As(err, &se) {
			a.bad, a.badErr = i, err
		}
		return cas.ID{}, 0, 0, fmt.Errorf("commit %s: %w", c.hash, err)
	}
	a.gitlinks += r.gitlinks
	a.badNames += r.badNames
	a.tooLarge += r.tooLarge
	a.step(c.pos + 1)
	return r.id, r.files, r.bytes, nil
}

// quote quotes a reason for a message, cut to 60 characters.
func quote(s string) string {
	if r := []rune(s); len(r) > 60 {
		s = string(r[:60]) + "..."
	}
	return fmt.Sprintf("%q", s)
}

// progress reports to Options.Progress: once at the start, then whenever
// the count grows.
type progress struct {
	fn          func(done, total int)
	total, last int
	started     bool
}

func (p *progress) report(done int) {
	done = min(done, p.total)
	if p.fn == nil || (p.started && done <= p.last) {
		return
	}
	p.started, p.last = true, done
	p.fn(done, p.total)
}
