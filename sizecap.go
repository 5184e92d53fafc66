package casckpt

import "context"

// DefaultMaxStoreSize is the size cap Snapshot applies by default.
const DefaultMaxStoreSize = 500 << 20

// enforceCap frees space after a snapshot if the store is over its cap. The
// caller holds no lock. The store's size is its packs, as the snapshot's
// commit counted them, and its database: no walk of the directory.
func (s *Store) enforceCap(ctx context.Context, limit int64, just SnapshotResult) (collectResult, error) {
	db, err := fileSize(s.dbPath())
	if err != nil || just.packBytes+db <= limit {
		return collectResult{fits: true}, err
	}
	ss, err := s.begin(ctx, true, false)
	if err != nil {
		return collectResult{}, err
	}
	defer ss.end()
	return ss.collectToCap(ctx, collectRequest{cap: limit, protect: just.ID, current: just.Project})
}

// collectToCap collects as collect does and then measures the store on
// disk (allocated blocks included, as du counts them): the plan counts
// object bytes, but pack rounding and a database that grew while it
// committed can still leave the store a little over. It then aims lower,
// so that the cap holds on disk too.
func (ss *session) collectToCap(ctx context.Context, req collectRequest) (collectResult, error) {
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
