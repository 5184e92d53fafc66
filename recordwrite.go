package casckpt

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/manifest"
)

// errUnknownProject rolls back the recording of writes to a project with no
// snapshot: no restore could use them.
var errUnknownProject = errors.New("the project has no snapshot")

// RecordWrite records in the write ledger of the project in directory dir
// that an agent has just written paths (relative to dir, or absolute inside
// it): what each holds now is the agent's. A missing path records a
// deletion. Each path is read as a snapshot would read it (a link is not
// followed: its target is its content) and only hashed, never stored.
// RestoreSafe puts back a path that is still as last recorded.
//
// It returns how many writes it recorded: none for a project with no
// snapshot yet (a snapshot taken after a write makes it irrelevant).
// A path outside dir is refused (ErrRefused) and nothing is recorded. The
// ledger keeps the newest index.LedgerLimit writes of each project, one
// per path.
func (s *Store) RecordWrite(ctx context.Context, dir string, paths ...string) (int, error) {
	workdir, err := Workdir(dir)
	if err != nil {
		return 0, err
	}
	rels := make([]string, len(paths))
	for i, p := range paths {
		if rels[i], err = projectPath(workdir, p); err != nil {
			return 0, err
		}
	}
	writes, err := readWrites(ctx, workdir, rels)
	if err != nil {
		return 0, err
	}
	ss, err := s.begin(ctx, false, false)
	if err != nil {
		return 0, err
	}
	defer ss.End()
	if !ss.Locked() {
		return 0, nil // no store: no project has a snapshot
	}
	now := s.opts.Now()
	err = ss.Update(func(tx *index.Tx) error {
		_, known, err := tx.Project(workdir)
		if err != nil {
			return err
		}
		if !known {
			return errUnknownProject
		}
		for i := range writes {
			writes[i].Time = now
		}
		if err := tx.RecordWrites(workdir, writes); err != nil {
			return err
		}
		return ss.Journal().Writes(ctx, tx, workdir, writes)
	})
	if errors.Is(err, errUnknownProject) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("record writes in %s: %w", workdir, err)
	}
	return len(writes), nil
}

// readWrites reads the state of each path rel of workdir, once per path.
func readWrites(ctx context.Context, workdir string, rels []string) ([]index.Write, error) {
	root, err := os.OpenRoot(workdir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	seen := map[string]bool{}
	writes := []index.Write{}
	for _, rel := range rels {
		if seen[rel] {
			continue
		}
		seen[rel] = true
		state, err := pathState(ctx, root, rel)
		if err != nil {
			return nil, fmt.Errorf("record write of %s: %w", rel, err)
		}
		writes = append(writes, index.Write{Path: rel, State: state})
	}
	return writes, nil
}

// projectPath returns path p, relative to workdir or absolute inside it, as
// a slash-separated path relative to workdir. The directories above an
// absolute p may be named through links (/tmp for /private/tmp); p itself
// is never followed.
func projectPath(workdir, p string) (string, error) {
	if !filepath.IsAbs(p) {
		rel, err := relPath(p)
		if err == nil && rel == "" {
			err = fmt.Errorf("%w: path %q names the project directory itself: name the files written", ErrRefused, p)
		}
		return rel, err
	}
	clean := filepath.Clean(p)
	for _, candidate := range []string{clean, filepath.Join(resolveExisting(filepath.Dir(clean)), filepath.Base(clean))} {
		if rel, err := filepath.Rel(workdir, candidate); err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel), nil
		}
	}
	return "", fmt.Errorf("%w: %s is not inside the project directory %s", ErrRefused, p, workdir)
}

// readAttempts is how often pathState reads a file that changes while it
// is read.
const readAttempts = 3

// pathState returns the state ID (manifest.Entry.StateID) of what path rel
// of root holds: a file's bytes, cut into chunks as a snapshot cuts them
// and only hashed, a link's target (never followed), a directory, or, for a
// missing path, the zero ID. A file changing while read is read again.
func pathState(ctx context.Context, root *os.Root, rel string) (cas.ID, error) {
	name := filepath.FromSlash(rel)
	for attempt := 1; ; attempt++ {
		st, err := root.Lstat(name)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			return cas.ID{}, nil // deleted
		case err != nil:
			return cas.ID{}, err
		case st.Mode()&fs.ModeSymlink != 0:
			target, err := root.Readlink(name)
			if err != nil {
				return cas.ID{}, err
			}
			return manifest.Entry{Kind: manifest.KindSymlink, Target: target}.StateID(), nil
		case st.IsDir():
			return manifest.Entry{Kind: manifest.KindDir}.StateID(), nil
		case !st.Mode().IsRegular():
			return cas.ID{}, errors.New("not a file, link or directory: a snapshot would not capture it")
		}
		e, stable, err := fileState(ctx, root, name, st)
		if err != nil || stable {
			return e.StateID(), err
		}
		if attempt == readAttempts {
			return cas.ID{}, errors.New("the file kept changing while it was read: record it again once it is written")
		}
	}
}

// fileState reads the regular file name of root that Lstat saw as st.
// stable is false when another file is there now, or the file changed
// while it was read.
func fileState(ctx context.Context, root *os.Root, name string, st fs.FileInfo) (e manifest.Entry, stable bool, err error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return e, false, nil
	}
	if err != nil {
		return e, false, err
	}
	defer f.Close()
	fst, err := f.Stat()
	if err != nil || !os.SameFile(st, fst) || !fst.Mode().IsRegular() {
		return e, false, err // replaced since the Lstat (by a link, perhaps)
	}
	c, err := manifest.PutContent(ctx, hashOnly{}, f, fst.Size(), math.MaxInt64)
	if err != nil || c.Grew || c.Size != fst.Size() {
		return e, false, err
	}
	return manifest.Entry{Kind: manifest.KindFile, Exec: fst.Mode()&0o100 != 0, Chunks: c.Chunks}, true, nil
}

// hashOnly is a Putter that stores nothing: it returns the ID the object
// would have.
type hashOnly struct{}

func (hashOnly) Put(_ context.Context, kind cas.Kind, data []byte) (cas.ID, error) {
	return cas.Sum(kind, data), nil
}

// recordOwnWrites records in project workdir's write ledger the states
// that changes (a restore's or an undo's plan) wrote, so that a safe
// restore counts them as the agent's, as it counts the tree that the
// agent's restore or undo left. A change that was not written as planned
// (a file changed meanwhile, left alone) leaves a state the ledger does
// not name, and so still counts as a person's.
func (ss *hold) recordOwnWrites(ctx context.Context, workdir string, changes []manifest.Change) error {
	if len(changes) == 0 {
		return nil
	}
	now := ss.s.opts.Now()
	writes := make([]index.Write, 0, len(changes))
	for _, c := range changes {
		if c.New.Kind != manifest.KindDir && c.Old.Kind != manifest.KindDir {
			writes = append(writes, index.Write{Path: c.Path, State: c.New.StateID(), Time: now})
		}
	}
	return ss.Update(func(tx *index.Tx) error {
		if err := tx.RecordWrites(workdir, writes); err != nil {
			return err
		}
		return ss.Journal().Writes(ctx, tx, workdir, writes)
	})
}
