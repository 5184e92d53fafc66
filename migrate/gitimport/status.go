package gitimport

import (
	"context"
	"fmt"
	"os"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/casckpt/casckpt"
)

// UnitStatus is how far a unit is imported.
type UnitStatus struct {
	Path string
	// SizeBytes adds up the sizes of every file under Path.
	SizeBytes int64
	// Migrated: every commit reachable from every reference (HEAD
	// included) of every repository in it has been imported, and nothing
	// in it is unreadable. A unit with no commits is migrated.
	Migrated bool
}

// Status lists the units f finds, in its order, with their size and
// whether they are fully imported into store. A unit that cannot be read
// is listed as not migrated; only a failing Candidates, or a failing
// casckpt store, is an error. Status writes nothing.
func Status(ctx context.Context, store Importer, f Finder) ([]UnitStatus, error) {
	units, err := Scan(f)
	if err != nil {
		return nil, err
	}
	out := make([]UnitStatus, 0, len(units))
	for _, u := range units {
		l, err := unitStatus(ctx, store, u)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// unitStatus measures a unit and checks that every commit in it has been
// imported under the workdir of a project of its repository.
func unitStatus(ctx context.Context, store Importer, u Unit) (UnitStatus, error) {
	l := UnitStatus{Path: u.Path, Migrated: len(u.Problems) == 0}
	size, err := casckpt.DirSize(u.Path)
	if err != nil {
		l.Migrated = false
	}
	l.SizeBytes = size
	var origins []string
	for _, s := range u.Sources {
		if err := ctx.Err(); err != nil {
			return l, err
		}
		if len(s.Problems) > 0 {
			l.Migrated = false
			continue
		}
		err := withObjects(s.Path, func(st *objectReader) error {
			held := map[plumbing.Hash]bool{}
			for _, p := range s.Projects {
				commits, problems := history(st, p.tips)
				if len(problems) > 0 {
					l.Migrated = false
				}
				for _, c := range commits {
					held[c.hash] = true
					origins = append(origins, origin(p.Workdir, c.hash))
				}
			}
			var tips []plumbing.Hash
			for _, r := range s.Unowned {
				tips = append(tips, r.Hash)
			}
			commits, problems := history(st, tips)
			if len(problems) > 0 {
				l.Migrated = false
			}
			for _, c := range commits {
				if !held[c.hash] {
					l.Migrated = false // a commit no project holds cannot be imported
				}
			}
			return nil
		})
		if err != nil {
			l.Migrated = false
		}
	}
	if !l.Migrated || len(origins) == 0 {
		return l, nil
	}
	imported, err := store.Imported(ctx, origins)
	if err != nil {
		return l, fmt.Errorf("legacy store %s: %w", u.Path, err)
	}
	for _, o := range origins {
		if !imported[o] {
			l.Migrated = false
			break
		}
	}
	return l, nil
}

// Clear deletes, each whole, the units f finds that are fully imported
// into store (see UnitStatus.Migrated). It keeps the others and names them
// in kept. Each unit is read and checked just before it is deleted. With
// dryRun it deletes nothing and returns what it would do. deleted and kept
// are never nil.
func Clear(ctx context.Context, store Importer, f Finder, dryRun bool) (deleted, kept []string, bytesFreed int64, err error) {
	deleted, kept = []string{}, []string{}
	paths, err := f.Candidates()
	if err != nil {
		return deleted, kept, 0, err
	}
	for _, p := range paths {
		// Each unit is read just before it is judged, to narrow the window
		// in which its agent could add a commit unseen.
		u, ok := f.Read(p)
		if !ok {
			continue
		}
		l, err := unitStatus(ctx, store, u)
		if err != nil {
			return deleted, kept, bytesFreed, err
		}
		if !l.Migrated {
			kept = append(kept, u.Path)
			continue
		}
		if !dryRun {
			if err := os.RemoveAll(u.Path); err != nil {
				return deleted, kept, bytesFreed, fmt.Errorf("delete legacy store %s: %w", u.Path, err)
			}
		}
		deleted = append(deleted, u.Path)
		bytesFreed += l.SizeBytes
	}
	return deleted, kept, bytesFreed, nil
}
