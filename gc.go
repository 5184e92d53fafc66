package casckpt

import "context"

// GCResult says what garbage collection freed.
type GCResult struct {
	ObjectsDeleted int
	BytesFreed     int64
}

// GC deletes every stored object no snapshot reaches and returns the space:
// dead packs are deleted, mostly dead ones rewritten. It waits for running
// snapshots and restores to finish and holds them off while it runs. On a
// store in a bucket it works in two phases a grace period apart (see
// remoteGC): a first run deletes nothing.
func (s *Store) GC(ctx context.Context) (GCResult, error) {
	if s.remote != nil {
		return s.remoteGC(ctx)
	}
	ss, err := s.begin(ctx, true, false)
	if err != nil {
		return GCResult{}, err
	}
	defer ss.end()
	res, err := ss.collect(ctx, collectRequest{})
	return GCResult{ObjectsDeleted: res.objectsDeleted, BytesFreed: res.bytesFreed}, err
}
