package migrate

import (
	"context"
	"fmt"
	"os"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/casckpt/casckpt"
)

// Legacy is a top-level legacy store in a source directory: the shared
// store, a shadow repository, or a legacy-* directory of them.
type Legacy struct {
	Path string
	// SizeBytes adds up the sizes of every file under Path.
	SizeBytes int64
	// Migrated: every commit reachable from every reference (HEAD
	// included) of every repository in it has been imported, and nothing
	// in it is unreadable. A store with no commits is migrated.
	Migrated bool
}

// Status lists the legacy stores under from, ordered by path, with their
// size and whether they are fully imported into store. A missing from
// holds none. A store that cannot be read is listed as not migrated; only
// a directory that cannot be listed, or a failing casckpt store, is an
// error. Status writes nothing.
func Status(ctx context.Context, store Importer, from string) ([]Legacy, error) {
	units, err := scan(from)
	if err != nil {
		return nil, err
	}
	out := make([]Legacy, 0, len(units))
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
func unitStatus(ctx context.Context, store Importer, u unit) (Legacy, error) {
	l := Legacy{Path: u.path, Migrated: len(u.problems) == 0}
	size, err := casckpt.DirSize(u.path)
	if err != nil {
		l.Migrated = false
	}
	l.SizeBytes = size
	var origins []string
	for _, s := range u.sources {
		if err := ctx.Err(); err != nil {
			return l, err
		}
		if len(s.Problems) > 0 {
			l.Migrated = false
			continue
		}
		err := withRepo(s.Path, func(st *filesystem.Storage) error {
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
			for _, t := range s.unowned {
				tips = append(tips, t.hash)
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
		return l, fmt.Errorf("legacy store %s: %w", u.path, err)
	}
	for _, o := range origins {
		if !imported[o] {
			l.Migrated = false
			break
		}
	}
	return l, nil
}

// ClearLegacy deletes, each whole, the legacy stores under from that are
// fully imported into store (see Legacy.Migrated): the shared store, a
// shadow repository, or a legacy-* directory when everything in it is
// imported. It keeps the others and names them in kept. Each store is
// read and checked just before it is deleted. With dryRun it deletes nothing
// and returns what it would do. deleted and kept are never nil.
func ClearLegacy(ctx context.Context, store Importer, from string, dryRun bool) (deleted, kept []string, bytesFreed int64, err error) {
	deleted, kept = []string{}, []string{}
	paths, err := candidates(from)
	if err != nil {
		return deleted, kept, 0, err
	}
	for _, p := range paths {
		// Each unit is read just before it is judged, to narrow the window
		// in which Hermes could add a commit unseen.
		u, ok := scanUnit(p)
		if !ok {
			continue
		}
		l, err := unitStatus(ctx, store, u)
		if err != nil {
			return deleted, kept, bytesFreed, err
		}
		if !l.Migrated {
			kept = append(kept, u.path)
			continue
		}
		if !dryRun {
			if err := os.RemoveAll(u.path); err != nil {
				return deleted, kept, bytesFreed, fmt.Errorf("delete legacy store %s: %w", u.path, err)
			}
		}
		deleted = append(deleted, u.path)
		bytesFreed += l.SizeBytes
	}
	return deleted, kept, bytesFreed, nil
}
