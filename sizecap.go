package casckpt

import (
	"context"
	"fmt"
)

// DefaultMaxStoreSize is the size cap Snapshot applies by default.
const DefaultMaxStoreSize = 500 << 20

// refuseOverHalfCap refuses a snapshot of workdir that would add stored
// bytes to the store, more than half of its size cap limit (none when
// limit <= 0): the cap would drop other projects' snapshots to make room
// for one that large, so it is not taken instead.
func refuseOverHalfCap(workdir string, stored, limit int64) error {
	if limit <= 0 || stored <= limit/2 {
		return nil
	}
	return fmt.Errorf("%w: a snapshot of %s would add %d bytes (%s) to the store, more than half of its %d-byte (%s) size cap; nothing was stored: exclude its large files or raise the cap",
		ErrRefused, workdir, stored, mebibytes(stored), limit, mebibytes(limit))
}

// mebibytes writes n bytes in MiB, to one decimal.
func mebibytes(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// enforceCap frees space after a snapshot if the store is over its cap. The
// caller holds no lock. The store's size is its packs that no gc is
// deleting, as the snapshot's commit counted them (repo.PackBytes), and
// its database when it is part of the store (not a journal's cache): no
// walk of the directory, no request to a bucket. Over the cap, it drops
// snapshots as gc.PlanCap plans and reclaims their space (maintain); a
// backend without immediate deletion reclaims it at a due collection
// (never waiting), so nothing is repacked or deleted there.
func (s *Store) enforceCap(ctx context.Context, limit int64, just SnapshotResult) (collectResult, error) {
	fixed, err := s.databaseBytes(just.inlineBytes)
	if err != nil {
		return collectResult{}, err
	}
	if just.packBytes+fixed <= limit {
		return collectResult{fits: true}, nil
	}
	return s.maintain(ctx, collectRequest{cap: limit, protect: just.ID, current: just.Project}, true)
}

// collectToCap collects as collect does and then measures the store on
// disk (allocated blocks included, as du counts them): the plan counts
// object bytes, but pack rounding and a database that grew while it
// committed can still leave the store a little over. It then aims lower,
// so that the cap holds on disk too.
func (ss *hold) collectToCap(ctx context.Context, req collectRequest) (collectResult, error) {
	res, err := ss.collect(ctx, req)
	if err != nil || req.cap <= 0 || req.dryRun {
		return res, err
	}
	target := req.cap
	for range 3 {
		used, err := diskUsage(ss.s.dir)
		if err != nil || used <= req.cap || !res.fits {
			return res, err
		}
		target -= used - req.cap + 64<<10
		more, err := ss.collect(ctx, collectRequest{cap: target, protect: req.protect, current: req.current})
		res.plan.Drops = append(res.plan.Drops, more.plan.Drops...)
		res.plan.Forget = append(res.plan.Forget, more.plan.Forget...)
		res.bytesFreed += more.bytesFreed
		res.objectsDeleted += more.objectsDeleted
		res.projected, res.fits = more.projected, more.fits
		if err != nil {
			return res, err
		}
	}
	used, err := diskUsage(ss.s.dir)
	res.fits = res.fits && used <= req.cap
	return res, err
}
