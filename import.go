package casckpt

import (
	"context"
	"fmt"
	"time"

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
	// Parent is the origin of the snapshot this one follows in its source
	// (a commit's first parent); "" for none. See Unchanged and Turn.
	Parent string
	// Unchanged says the snapshot holds what Parent's does (an empty
	// commit): none is recorded, and Origin is recorded as naming Parent's
	// snapshot. When Parent's snapshot is not known, it is recorded as any
	// other.
	Unchanged bool
	// Session and Turn label the snapshot as SnapshotOptions does (each
	// "" or a valid label, see CheckLabel). With Turn, the snapshot ends
	// that turn of the project: a new turn starts on Parent's snapshot
	// (this one when Parent names none), and a turn recorded before ends
	// here instead.
	Session, Turn string
	// Build stores the snapshot's files through put (with manifest.PutFile
	// and manifest.Put) and returns its root tree and its counts of files and
	// bytes. It runs once, inside Import.
	Build func(ctx context.Context, put cas.Putter) (root cas.ID, files, bytes int64, err error)
}

// ImportResult says what Import recorded.
type ImportResult struct {
	Imported int
	Skipped  int // already imported
	// Unchanged counts the snapshots not recorded because they hold what
	// their parent's does (ImportSnapshot.Unchanged).
	Unchanged int
	IDs       []cas.ID
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
	for _, imp := range p.Snapshots {
		for _, l := range []string{imp.Session, imp.Turn} {
			if l != "" {
				if err := CheckLabel(l); err != nil {
					return res, fmt.Errorf("import %s: %w", imp.Origin, err)
				}
			}
		}
	}
	ss, err := s.begin(ctx, false, true)
	if err != nil {
		return res, err
	}
	defer ss.End()
	var pl *importPlan
	err = ss.Read(func(v view) error {
		pl = &importPlan{w: cas.NewWriter(s.repo.Packs(), v.Objects), workdir: workdir, ids: map[string]cas.ID{}, times: map[cas.ID]time.Time{}, turns: map[string]*index.Turn{}}
		return pl.build(ctx, v.Tx, p.Snapshots, &res)
	})
	if err != nil || (len(pl.recs) == 0 && len(pl.aliases) == 0) {
		pl.w.Abort()
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
		if _, err := commitObjects(context.WithoutCancel(ctx), tx, pl.w, false, workdir, p.Created, touched, index.DirID{}); err != nil {
			return err
		}
		return pl.commit(tx, &res)
	})
	if err != nil {
		pl.w.Abort()
		return res, err
	}
	res.Imported = len(res.IDs)
	res.Skipped += len(pl.recs) - len(res.IDs)
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
