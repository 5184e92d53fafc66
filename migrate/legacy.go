package migrate

import (
	"context"
	"fmt"
	"os"
	"sort"

	"github.com/casckpt/casckpt"
)

// Legacy is a top-level legacy store in a source directory: the shared
// store, a shadow repository, or a legacy-* folder of them.
type Legacy struct {
	Path      string
	SizeBytes int64
	// Migrated: every commit of every history in it has been imported.
	Migrated bool
}

// Status lists the legacy stores under from with their size and whether
// they are fully imported into store.
func Status(ctx context.Context, store *casckpt.Store, from string) ([]Legacy, error) {
	hs, problems, err := histories(from)
	if err != nil {
		return nil, err
	}
	repos, err := Find(from)
	if err != nil {
		return nil, err
	}
	var origins []string
	for _, h := range hs {
		for _, c := range h.commits {
			origins = append(origins, origin(h.workdir, c.Hash))
		}
	}
	imported, err := store.Imported(ctx, origins)
	if err != nil {
		return nil, err
	}
	units := map[string]*Legacy{}
	for _, r := range repos {
		if units[r.Unit] == nil {
			size, err := casckpt.DirSize(r.Unit)
			if err != nil {
				return nil, err
			}
			units[r.Unit] = &Legacy{Path: r.Unit, SizeBytes: size, Migrated: true}
		}
	}
	for _, h := range hs {
		for _, c := range h.commits {
			if !imported[origin(h.workdir, c.Hash)] {
				units[h.repo.Unit].Migrated = false
			}
		}
	}
	// A repository that could not be read is not known to be imported.
	for _, r := range repos {
		for _, p := range problems {
			if len(p) >= len(r.Path) && p[:len(r.Path)] == r.Path {
				units[r.Unit].Migrated = false
			}
		}
	}
	out := make([]Legacy, 0, len(units))
	for _, u := range units {
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// ClearLegacy deletes the legacy stores under from that are fully imported
// into store and keeps the others. With dryRun it deletes nothing.
func ClearLegacy(ctx context.Context, store *casckpt.Store, from string, dryRun bool) (deleted, kept []string, bytesFreed int64, err error) {
	legacy, err := Status(ctx, store, from)
	if err != nil {
		return nil, nil, 0, err
	}
	deleted, kept = []string{}, []string{}
	for _, l := range legacy {
		if !l.Migrated {
			kept = append(kept, l.Path)
			continue
		}
		if !dryRun {
			if err := os.RemoveAll(l.Path); err != nil {
				return deleted, kept, bytesFreed, fmt.Errorf("delete %s: %w", l.Path, err)
			}
		}
		deleted = append(deleted, l.Path)
		bytesFreed += l.SizeBytes
	}
	return deleted, kept, bytesFreed, nil
}
