package casckpt

import (
	"context"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
)

// ImportProject is a project's history brought from another store (a
// migration), oldest snapshot first.
type ImportProject struct {
	// Workdir is the project's absolute directory; it need not exist.
	Workdir string
	Created time.Time
	// LastTouch is when the source last touched the project. The import
	// itself counts as a touch, so the project is not stale right after.
	LastTouch time.Time
	Snapshots []ImportSnapshot
}

// ImportSnapshot is one snapshot to import.
type ImportSnapshot struct {
	Time   time.Time
	Reason string
	// MaxFileSize is the size limit Build left larger files out by (0:
	// none), as in Snapshot.MaxFileSize: a restore leaves such files alone.
	MaxFileSize int64
	// Origin names the source uniquely (a commit, say). An origin imported
	// once is skipped ever after, even if its snapshot was dropped.
	Origin string
	// Build stores the snapshot's files through put (with manifest.PutFile
	// and manifest.Put) and returns its root tree and its counts of files and
	// bytes. It runs once, inside Import.
	Build func(ctx context.Context, put cas.Putter) (root cas.ID, files, bytes int64, err error)
}

// ImportResult says what Import recorded.
type ImportResult struct {
	Imported int
	Skipped  int // already imported
	IDs      []cas.ID
}

// Import records a project's imported snapshots in one commit. Content is
// stored as snapshots store it, so it deduplicates with everything else.
// Retention rules do not apply to imported snapshots.
func (s *Store) Import(ctx context.Context, p ImportProject) (_ ImportResult, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverCorrupt(&err)
	res := ImportResult{IDs: []cas.ID{}}
	workdir, err := projectName(p.Workdir)
	if err != nil {
		return res, err
	}
	ss, err := s.begin(ctx, false, true)
	if err != nil {
		return res, err
	}
	defer ss.end()
	if err := ss.view(); err != nil {
		return res, err
	}
	w := cas.NewWriter(s.packFS, s.packsDir(), ss.objects)
	var recs []Snapshot
	var origins []string
	nextSeq := uint64(1)
	if ss.tx != nil {
		nextSeq = index.NextSeq(ss.tx, workdir)
	}
	for _, imp := range p.Snapshots {
		if ss.tx != nil {
			if _, done := index.Origin(ss.tx, imp.Origin); done {
				res.Skipped++
				continue
			}
		}
		root, files, bytes, err := imp.Build(ctx, w)
		if err != nil {
			w.Abort()
			return res, err
		}
		rec := Snapshot{ID: index.NewSnapshotID(workdir, root, imp.Time, imp.Reason), Project: workdir, Root: root,
			Time: imp.Time, Reason: imp.Reason, Stats: index.Stats{Files: files, Bytes: bytes}, MaxFileSize: imp.MaxFileSize}
		if rec.RecordID, err = putCopy(ctx, w, rec, nextSeq+uint64(len(recs)), imp.Origin); err != nil {
			w.Abort()
			return res, err
		}
		recs = append(recs, rec)
		origins = append(origins, imp.Origin)
	}
	ss.endView()
	if len(recs) == 0 {
		w.Abort()
		return res, nil
	}
	if err := w.Flush(); err != nil {
		w.Abort()
		return res, err
	}
	err = ss.update(func(tx *bolt.Tx) error {
		if _, err := w.Commit(tx, false); err != nil {
			return err
		}
		proj, ok, err := index.GetProject(tx, workdir)
		if err != nil {
			return err
		}
		if !ok {
			proj = index.Project{Workdir: workdir, Created: p.Created}
		}
		// The import touches the project: an old history just brought in
		// must not be dropped as stale by the next prune (and its source
		// then deleted by clear-legacy).
		for _, t := range []time.Time{p.LastTouch, ss.s.opts.Now()} {
			if t.After(proj.LastTouch) {
				proj.LastTouch = t
			}
		}
		if err := index.PutProject(tx, proj); err != nil {
			return err
		}
		ids := []cas.ID{}
		for i := range recs {
			if _, done := index.Origin(tx, origins[i]); done { // a concurrent import won
				continue
			}
			if err := index.AddSnapshot(tx, &recs[i]); err != nil {
				return err
			}
			if err := index.PutOrigin(tx, origins[i], recs[i].ID); err != nil {
				return err
			}
			ids = append(ids, recs[i].ID)
		}
		res.IDs = ids
		return nil
	})
	if err != nil {
		w.Abort()
		return res, err
	}
	res.Imported = len(res.IDs)
	res.Skipped += len(recs) - len(res.IDs)
	return res, nil
}

// Imported reports which of the given origins have been imported.
func (s *Store) Imported(ctx context.Context, origins []string) (map[string]bool, error) {
	out := make(map[string]bool, len(origins))
	err := s.read(ctx, func(ss *session) error {
		for _, o := range origins {
			if ss.tx != nil {
				_, out[o] = index.Origin(ss.tx, o)
			}
		}
		return nil
	})
	return out, err
}
