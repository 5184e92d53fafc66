package migrate

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/manifest"
)

// Options tune Run. The zero value is fine.
type Options struct {
	// Progress, if set, is called as commits are handled, with the number
	// done and the total.
	Progress func(done, total int)
}

// Report says what Run did.
type Report struct {
	Projects          int
	SnapshotsImported int
	SnapshotsSkipped  int // imported by an earlier run
	// Errors name the repositories and projects that could not be read;
	// everything else was imported.
	Errors []string
	// GitlinksSkipped counts submodule entries, whose content no legacy
	// store holds; NamesSkipped, entries casckpt cannot hold.
	GitlinksSkipped int
	NamesSkipped    int
}

// history is a project's commits, oldest first.
type history struct {
	project
	repo    Repo
	commits []*object.Commit
}

// origin names a commit of a project for Store.Import.
func origin(workdir string, commit plumbing.Hash) string {
	return "git:" + commit.String() + ":" + workdir
}

// histories reads every project history of every repository under from.
func histories(from string) ([]history, []string, error) {
	repos, err := Find(from)
	if err != nil {
		return nil, nil, err
	}
	var out []history
	var problems []string
	for _, r := range repos {
		st := open(r)
		projs, probs := projects(r, st)
		problems = append(problems, probs...)
		for _, p := range projs {
			commits, err := firstParentChain(st, p.tip)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %s: %v", r.Path, p.workdir, err))
				continue
			}
			h := history{project: p, repo: r, commits: commits}
			if h.created.IsZero() && len(commits) > 0 {
				h.created = commits[0].Committer.When
			}
			if h.lastTouch.IsZero() && len(commits) > 0 {
				h.lastTouch = commits[len(commits)-1].Committer.When
			}
			out = append(out, h)
		}
	}
	return out, problems, nil
}

// firstParentChain returns the commits from the root to tip, oldest first.
func firstParentChain(st storer.EncodedObjectStorer, tip plumbing.Hash) ([]*object.Commit, error) {
	var chain []*object.Commit
	seen := map[plumbing.Hash]bool{}
	for h := tip; ; {
		if seen[h] {
			return nil, fmt.Errorf("commit %s: history loops", h)
		}
		seen[h] = true
		c, err := object.GetCommit(st, h)
		if err != nil {
			return nil, fmt.Errorf("commit %s: %w", h, err)
		}
		chain = append(chain, c)
		if len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain, nil
}

// Run imports every commit of every legacy repository under from that is
// not imported yet. It never writes to from.
func Run(ctx context.Context, store *casckpt.Store, from string, opts Options) (Report, error) {
	rep := Report{Errors: []string{}}
	hs, problems, err := histories(from)
	if err != nil {
		return rep, err
	}
	rep.Errors = append(rep.Errors, problems...)
	total, done := 0, 0
	for _, h := range hs {
		total += len(h.commits)
	}
	for _, h := range hs {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		conv := &converter{st: open(h.repo), trees: map[plumbing.Hash]treeResult{}, blobs: map[plumbing.Hash]manifest.Entry{}}
		imp := casckpt.ImportProject{Workdir: h.workdir, Created: h.created, LastTouch: h.lastTouch}
		for _, c := range h.commits {
			reason, _, _ := strings.Cut(strings.TrimSpace(c.Message), "\n")
			imp.Snapshots = append(imp.Snapshots, casckpt.ImportSnapshot{
				Time: c.Committer.When, Reason: reason, Origin: origin(h.workdir, c.Hash),
				Build: func(ctx context.Context, put cas.Putter) (cas.ID, int64, int64, error) {
					r, err := conv.tree(ctx, put, c.TreeHash)
					return r.id, r.files, r.bytes, err
				},
			})
		}
		res, err := store.Import(ctx, imp)
		done += len(h.commits)
		if opts.Progress != nil {
			opts.Progress(done, total)
		}
		if err != nil {
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			rep.Errors = append(rep.Errors, fmt.Sprintf("%s: %s: %v", h.repo.Path, h.workdir, err))
			continue
		}
		rep.Projects++
		rep.SnapshotsImported += res.Imported
		rep.SnapshotsSkipped += res.Skipped
		rep.GitlinksSkipped += conv.gitlinks
		rep.NamesSkipped += conv.badNames
	}
	return rep, nil
}

// treeResult is a converted git tree.
type treeResult struct {
	id           cas.ID
	files, bytes int64
}

// converter turns git trees into manifest trees, reading each git tree and
// blob once per project.
type converter struct {
	st       storer.EncodedObjectStorer
	trees    map[plumbing.Hash]treeResult
	blobs    map[plumbing.Hash]manifest.Entry
	gitlinks int
	badNames int
}

func (c *converter) tree(ctx context.Context, put cas.Putter, h plumbing.Hash) (treeResult, error) {
	if r, ok := c.trees[h]; ok {
		return r, nil
	}
	gt, err := object.GetTree(c.st, h)
	if err != nil {
		return treeResult{}, fmt.Errorf("tree %s: %w", h, err)
	}
	var res treeResult
	t := manifest.Tree{}
	for _, e := range gt.Entries {
		if manifest.ValidName(e.Name) != nil {
			c.badNames++
			continue
		}
		switch e.Mode {
		case filemode.Dir:
			sub, err := c.tree(ctx, put, e.Hash)
			if err != nil {
				return treeResult{}, err
			}
			t.Entries = append(t.Entries, manifest.Entry{Name: e.Name, Kind: manifest.KindDir, Tree: sub.id})
			res.files += sub.files
			res.bytes += sub.bytes
		case filemode.Submodule:
			c.gitlinks++
		case filemode.Symlink:
			target, err := c.readBlob(e.Hash)
			if err != nil {
				return treeResult{}, err
			}
			if target == "" || len(target) > manifest.MaxTargetLen || strings.IndexByte(target, 0) >= 0 {
				c.badNames++
				continue
			}
			t.Entries = append(t.Entries, manifest.Entry{Name: e.Name, Kind: manifest.KindSymlink, Target: target, Size: int64(len(target))})
			res.files++
			res.bytes += int64(len(target))
		case filemode.Regular, filemode.Deprecated, filemode.Executable:
			entry, err := c.file(ctx, put, e.Hash, e.Mode == filemode.Executable)
			if err != nil {
				return treeResult{}, err
			}
			entry.Name = e.Name
			t.Entries = append(t.Entries, entry)
			res.files++
			res.bytes += entry.Size
		default:
			c.badNames++
		}
	}
	t.Sort()
	res.id, err = manifest.Put(ctx, put, t)
	if err != nil {
		return treeResult{}, fmt.Errorf("tree %s: %w", h, err)
	}
	c.trees[h] = res
	return res, nil
}

// file stores a blob's bytes exactly as the commit holds them.
func (c *converter) file(ctx context.Context, put cas.Putter, h plumbing.Hash, exec bool) (manifest.Entry, error) {
	if e, ok := c.blobs[h]; ok {
		e.Exec = exec
		return e, nil
	}
	blob, err := object.GetBlob(c.st, h)
	if err != nil {
		return manifest.Entry{}, fmt.Errorf("blob %s: %w", h, err)
	}
	r, err := blob.Reader()
	if err != nil {
		return manifest.Entry{}, fmt.Errorf("blob %s: %w", h, err)
	}
	defer r.Close()
	e, err := casckpt.PutFile(ctx, put, "", r, blob.Size, exec)
	if err != nil {
		return manifest.Entry{}, fmt.Errorf("blob %s: %w", h, err)
	}
	c.blobs[h] = e
	return e, nil
}

func (c *converter) readBlob(h plumbing.Hash) (string, error) {
	blob, err := object.GetBlob(c.st, h)
	if err != nil {
		return "", fmt.Errorf("blob %s: %w", h, err)
	}
	r, err := blob.Reader()
	if err != nil {
		return "", fmt.Errorf("blob %s: %w", h, err)
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, manifest.MaxTargetLen+1))
	return string(b), err
}
