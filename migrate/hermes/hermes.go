package hermes

import (
	"context"

	"github.com/casckpt/casckpt/migrate/gitimport"
)

// Run imports every commit of every legacy Hermes repository under from
// (the checkpoints directory) that is not imported yet, as gitimport.Run
// does. A missing from holds nothing. It never writes under from.
func Run(ctx context.Context, store gitimport.Importer, from string, opts gitimport.Options) (gitimport.Report, error) {
	return gitimport.Run(ctx, store, finder{from}, opts)
}

// Status lists the legacy stores under from, ordered by path, with their
// size and whether they are fully imported into store (gitimport.Status).
// A missing from holds none. Status writes nothing.
func Status(ctx context.Context, store gitimport.Importer, from string) ([]gitimport.UnitStatus, error) {
	return gitimport.Status(ctx, store, finder{from})
}

// ClearLegacy deletes, each whole, the legacy stores under from that are
// fully imported into store: the shared store, a shadow repository, or a
// legacy-* directory when everything in it is imported (gitimport.Clear).
// It keeps the others and names them in kept. With dryRun it deletes
// nothing and returns what it would do. deleted and kept are never nil.
func ClearLegacy(ctx context.Context, store gitimport.Importer, from string, dryRun bool) (deleted, kept []string, bytesFreed int64, err error) {
	return gitimport.Clear(ctx, store, finder{from}, dryRun)
}
