package casckpt

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/casckpt/casckpt/gc"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/osfs"
	"github.com/casckpt/casckpt/repo"
)

// ProjectState says whether a project's directory is there: "live",
// "orphan" (observably deleted: prune drops the project) or "unreachable"
// (out of sight, on an unmounted volume or under a missing or replaced
// parent: prune keeps it unless it is stale).
type ProjectState = gc.State

// The states of a project.
const (
	ProjectLive        = gc.Live
	ProjectOrphan      = gc.Orphan
	ProjectUnreachable = gc.Unreachable
)

// ProjectStatus describes one project of the store.
type ProjectStatus struct {
	// Workdir is the project's path; on a bucket store, on Machine.
	Workdir string
	// Machine is, on a bucket store, the machine whose project it is
	// (Store.Machine for this one's); "" for a store in a directory.
	Machine   string
	Snapshots int
	Created   time.Time
	LastTouch time.Time
	State     ProjectState
	// Lifecycle and Test are the project's policy's (Store.SetPolicy).
	Lifecycle string
	Test      bool
	// Bytes is the size of the newest snapshot's tree (0 without one).
	Bytes int64
	// StoredBytes is the sum of the AddedBytes of the project's snapshots
	// in the store, and StoredRawBytes of their AddedRawBytes: what they
	// stored when they were taken. It is read from the records, not
	// measured, so it is not what forgetting the project would free:
	// objects that a dropped older snapshot stored and newer ones still
	// use are not counted, nor snapshots whose AddedBytes is unknown, and
	// objects that another project's later snapshots reuse are.
	StoredBytes    int64
	StoredRawBytes int64
}

// StatusResult describes the store.
type StatusResult struct {
	Store string
	// SizeBytes counts every file under the store directory; for a store
	// in a bucket, the packs its cache knows of.
	SizeBytes int64
	Projects  []ProjectStatus
	// DamagedObjects are the objects of a bucket store that syncs skip
	// (see Verify; none for a store in a directory).
	DamagedObjects []DamagedObject
}

// Status describes the store and its projects. A store that does not exist
// reads as empty.
func (s *Store) Status(ctx context.Context) (StatusResult, error) {
	res := StatusResult{Store: s.Location(), Projects: []ProjectStatus{}}
	journaled := s.repo.Backend().Features().Journaled // the directory is a cache: count the packs
	err := s.read(ctx, func(v view) error {
		var err error
		if res.DamagedObjects, err = damagedObjects(v.Tx); err != nil {
			return err
		}
		if journaled {
			if res.SizeBytes, err = v.Tx.PackBytes(); err != nil {
				return err
			}
		}
		policies, err := v.Tx.Policies()
		if err != nil {
			return err
		}
		return v.Tx.EachProject(func(p index.ProjectSnapshots) error {
			machine, path := SplitWorkdir(p.Workdir)
			if machine == "" {
				machine = s.Machine()
			}
			ps := ProjectStatus{
				Workdir: path, Machine: machine, Snapshots: len(p.Snapshots), Created: p.Created,
				LastTouch: p.LastTouch, State: repo.ProjectState(p.Project),
				Lifecycle: policies[p.Workdir].Lifecycle, Test: policies[p.Workdir].Test,
			}
			if len(p.Snapshots) > 0 {
				ps.Bytes = p.Snapshots[0].Stats.Bytes
			}
			for _, sn := range p.Snapshots {
				ps.StoredBytes += sn.Added.Bytes
				ps.StoredRawBytes += sn.Added.Raw
			}
			res.Projects = append(res.Projects, ps)
			return nil
		})
	})
	if err != nil || journaled {
		return res, err
	}
	res.SizeBytes, err = DirSize(s.dir)
	return res, err
}

// DirSize adds up the sizes of every file under dir (0 if it is missing).
func DirSize(dir string) (int64, error) { return sumFiles(dir, false) }

// diskUsage adds up what every file of the store under dir occupies: its
// size or its allocated blocks, whichever is more. What a repair set aside
// (an old database, unreadable packs) is left out: it is the user's to
// delete, and no size cap may drop snapshots to make room for it.
func diskUsage(dir string) (int64, error) { return sumFiles(dir, true) }

// repairLeftover reports whether a file name is one a repair set aside.
func repairLeftover(name string) bool {
	return strings.Contains(name, ".db.old-") || strings.HasSuffix(name, ".damaged")
}

func sumFiles(dir string, store bool) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || !d.Type().IsRegular() || (store && repairLeftover(d.Name())) {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return nil // vanished meanwhile
		}
		n := info.Size()
		if st, ok := osfs.FromInfo(info); ok && store {
			n = max(n, st.Blocks*512)
		}
		total += n
		return nil
	})
	return total, err
}

// Clear deletes the whole store once no other process is using it.
func (s *Store) Clear(ctx context.Context) error {
	if err := s.repo.Backend().Refuse("clear"); err != nil {
		return err
	}
	if _, err := os.Stat(s.dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	ss, err := s.begin(ctx, true, false)
	if err != nil {
		return err
	}
	defer ss.End()
	if !ss.Locked() {
		return nil // cleared meanwhile
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == filepath.Base(s.repo.LockPath()) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(s.dir, e.Name())); err != nil {
			return fmt.Errorf("clear: %w", err)
		}
	}
	// The lock file goes last: a process waiting on it finds the store gone.
	if err := os.Remove(s.repo.LockPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("clear: %w", err)
	}
	if clearHook != nil {
		clearHook()
	}
	// A process that began once the lock file was gone makes a new store in
	// the directory, which then is no longer empty: that store is its, and
	// this one is cleared.
	if err := os.Remove(s.dir); err != nil && !osfs.IsNotEmpty(err) && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("clear: %w", err)
	}
	return nil
}

// clearHook, when set by a test, is called by Clear between the removal of
// the lock file and that of the store's directory.
var clearHook func()
