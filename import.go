package casckpt

import (
	"context"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/repo"
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
func (s *Store) Import(ctx context.Context, p ImportProject) (ImportResult, error) {
	if err := s.repo.Backend().Refuse("import (migrate)"); err != nil {
		return ImportResult{}, err
	}
	res := ImportResult{IDs: []cas.ID{}}
	workdir, err := knownWorkdir(p.Workdir)
	if err != nil {
		return res, err
	}
	ss, err := s.begin(ctx, false, true)
	if err != nil {
		return res, err
	}
	defer ss.End()
	var w *cas.Writer
	var recs []record
	var origins []string
	err = ss.Read(func(v view) error {
		w = cas.NewWriter(s.repo.Packs(), v.Objects)
		nextSeq := v.Tx.NextSeq(workdir)
		for _, imp := range p.Snapshots {
			if _, done := v.Tx.Origin(imp.Origin); done {
				res.Skipped++
				continue
			}
			root, files, bytes, err := imp.Build(ctx, w)
			if err != nil {
				return err
			}
			rec := record{ID: index.NewSnapshotID(workdir, root, imp.Time, imp.Reason), Project: workdir, Root: root,
				Time: imp.Time, Reason: imp.Reason, Stats: index.Stats{Files: files, Bytes: bytes}, MaxFileSize: imp.MaxFileSize}
			if rec.BackupID, err = repo.PutBackup(ctx, w, rec, nextSeq+uint64(len(recs)), imp.Origin); err != nil {
				return err
			}
			recs = append(recs, rec)
			origins = append(origins, imp.Origin)
		}
		return w.Flush(ctx)
	})
	if err != nil || len(recs) == 0 {
		w.Abort()
		return res, err
	}
	err = ss.Update(func(tx *index.Tx) error {
		// The import touches the project: an old history just brought in
		// must not be dropped as stale by the next prune (and its source
		// then deleted by clear-legacy).
		touched := ss.s.opts.Now()
		if p.LastTouch.After(touched) {
			touched = p.LastTouch
		}
		if err := commitObjects(context.WithoutCancel(ctx), tx, w, false, workdir, p.Created, touched, index.DirID{}); err != nil {
			return err
		}
		ids := []cas.ID{}
		for i := range recs {
			if _, done := tx.Origin(origins[i]); done { // a concurrent import won
				continue
			}
			if err := tx.AddSnapshot(&recs[i]); err != nil {
				return err
			}
			if err := tx.PutOrigin(origins[i], recs[i].ID); err != nil {
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
	err := s.read(ctx, func(v view) error {
		for _, o := range origins {
			_, out[o] = v.Tx.Origin(o)
		}
		return nil
	})
	return out, err
}
