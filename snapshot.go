package casckpt

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/restorer"
	"github.com/casckpt/casckpt/internal/scan"
	"github.com/casckpt/casckpt/manifest"
	"github.com/casckpt/casckpt/repo"
)

// DefaultKeep is how many snapshots per project Snapshot keeps by default.
const DefaultKeep = 20

// SnapshotOptions tune Snapshot. The zero value means the defaults.
type SnapshotOptions struct {
	Reason string
	// Keep is the most snapshots kept for the project: older unpinned ones
	// are dropped (default: the project's policy's keep, else DefaultKeep;
	// negative keeps all). A project with cleanup off (Store.SetPolicy)
	// drops none.
	Keep int
	// MaxFileSize excludes larger files (default 10 MiB).
	MaxFileSize int64
	// MaxFiles refuses larger trees (default 50,000).
	MaxFiles int
	// Exclude lists gitignore-syntax patterns, relative to the project
	// directory, excluded as DefaultExcludes are: a .gitignore negation
	// and the project's git index bring a path back alike. MaxDirFiles,
	// above zero, excludes whole each directory of that many files or
	// more (counted below it, after the other exclusions) that the git
	// index tracks none of. The snapshot records both: a restore, undo or
	// diff of it with the working tree applies them again, so leaves what
	// they exclude alone.
	Exclude     []string
	MaxDirFiles int
	// MaxStoreSize is the store's size cap in bytes: when a new snapshot
	// takes the store past it, older snapshots are dropped and collected in
	// the same call until it fits (default DefaultMaxStoreSize on a local
	// store and none on a store in a bucket: a fleet shares one, and a
	// default cap would have each machine drop the others' history; a cap
	// set here applies to both; negative: no cap). A snapshot that would
	// add more than half of the cap to the store by itself is refused
	// (ErrRefused), rather than dropping other projects' snapshots for it.
	MaxStoreSize int64
	// Progress, if set, is called as files are hashed, from any goroutine.
	Progress func(filesHashed, bytesHashed int64)
	// Session and Turn label the snapshot with the host's session and
	// turn IDs (see CheckLabel; "": none). The first snapshot of the
	// project with a turn ID starts the turn; EndTurn (which needs Turn)
	// ends it. When the tree is unchanged nothing new is stored, but the
	// turn still starts or ends, on the newest snapshot. See TurnInfo.
	Session string
	Turn    string
	EndTurn bool
	// Title names the turn the snapshot starts, for a person (see
	// TurnTitle, which it is reduced by); Interrupted marks the turn that
	// EndTurn ends as ended by the start of the next one, its host having
	// never said it ended.
	Title       string
	Interrupted bool
	// KeepTurns and KeepDays, when KeepTurns is above zero, replace Keep
	// (as a hook's snapshots do): the snapshots kept are those from the
	// start of the project's KeepTurns newest turns on and those of the
	// last KeepDays days, whichever keeps more, and the pinned ones.
	KeepTurns int
	KeepDays  int
	// keepDefault: Keep was not set; the project's policy may set it.
	keepDefault bool
	// capture is scan.Options.Capture: a restore's snapshot from before
	// holds what the restore overwrites, whatever its exclusion.
	capture func(rel string, dir bool) bool
	// keepTree is scan.Options.KeepTree: a restore's or an undo's scan
	// keeps the tree it saw, which apply compares the files it
	// overwrites with (scan.Result.Stamp).
	keepTree bool
}

// check refuses labels that are not valid IDs, and EndTurn without Turn.
func (o SnapshotOptions) check() error {
	for _, l := range []struct{ name, v string }{{"session", o.Session}, {"turn", o.Turn}} {
		if l.v == "" {
			continue
		}
		if err := CheckLabel(l.v); err != nil {
			return fmt.Errorf("snapshot: %s ID %q: %w", l.name, l.v, err)
		}
	}
	if o.EndTurn && o.Turn == "" {
		return fmt.Errorf("snapshot: %w: ending a turn needs its turn ID (SnapshotOptions.Turn)", ErrBadLabel)
	}
	return CheckExclusions(o.Exclude, o.MaxDirFiles)
}

func (o SnapshotOptions) withDefaults() SnapshotOptions {
	if o.Keep == 0 {
		o.Keep, o.keepDefault = DefaultKeep, true
	}
	if o.MaxStoreSize == 0 {
		o.MaxStoreSize = DefaultMaxStoreSize
	}
	return o
}

// SnapshotResult says what Snapshot did.
type SnapshotResult struct {
	// Created is false when the tree equals the newest snapshot (ID is then
	// that snapshot's) or is empty with no snapshot yet (ID is zero).
	Created bool
	ID      cas.ID
	Project string
	Files   int64 // files and links captured
	Bytes   int64 // their size
	Hashed  int64 // files read (the others were vouched for by the stat cache)
	// Stored is what the snapshot added to the store.
	Stored cas.WriteStats
	// Dropped are the snapshots removed by the Keep rule and the size cap.
	Dropped []cas.ID
	// BytesFreed is what the size cap returned.
	BytesFreed int64
	// Warnings name files not captured or changing while read.
	Warnings []string
	// Unreadable are the paths (relative to the project, sorted) that
	// were there but could not be read: the tree records them as not
	// captured (manifest.KindUnreadable), so that no diff, restore or undo
	// treats them as deleted.
	Unreadable []string
	// ExcludedByDefault counts the paths that the default exclude list
	// (scan.DefaultExcludes) alone left out.
	ExcludedByDefault int64
	// TurnStarted and TurnEnded say that the snapshot started or ended
	// the turn of SnapshotOptions.Turn.
	TurnStarted bool
	TurnEnded   bool

	packBytes   int64 // the store's pack bytes after the commit (repo.PackBytes)
	collectDue  bool  // enough snapshots were dropped for a collection
	foldDue     bool  // enough inline packs for a fold (noteInline)
	inlineBytes int64 // the bytes of the inline packs, in the database
}

// Snapshot records the tree of directory dir as a new snapshot of its
// project, unless it equals the newest one.
func (s *Store) Snapshot(ctx context.Context, dir string, opts SnapshotOptions) (SnapshotResult, error) {
	workdir, err := Workdir(dir)
	if err != nil {
		return SnapshotResult{}, err
	}
	if err := refuseSnapshotDir(workdir, s.opts.HomeDir); err != nil {
		return SnapshotResult{}, err
	}
	if err := opts.check(); err != nil {
		return SnapshotResult{}, err
	}
	if s.repo.Backend().Features().Journaled && opts.MaxStoreSize == 0 {
		opts.MaxStoreSize = -1 // no default cap on a bucket: see MaxStoreSize
	}
	opts = opts.withDefaults()
	_, statErr := os.Stat(s.dir)
	var listed listing
	ss, err := s.beginWith(ctx, repo.BeginOptions{Create: true, Alongside: func() {
		listed.l, listed.err = scan.List(ctx, workdir, s.listOptions(opts))
	}})
	if err != nil {
		return SnapshotResult{}, err
	}
	res, err := ss.snapshot(ctx, workdir, opts, listed)
	if err == nil && res.foldDue {
		_ = ss.foldInline(ctx) // logged; the next turn tries again
	}
	ss.End()
	if err != nil && errors.Is(statErr, fs.ErrNotExist) {
		s.repo.RemoveIfUnused() // a refused first snapshot leaves no store behind
	}
	if err != nil || !res.Created {
		return res, err
	}
	if res.collectDue {
		s.collectDue(ctx)
	}
	if opts.MaxStoreSize < 0 {
		return res, nil
	}
	capped, err := s.enforceCap(ctx, opts.MaxStoreSize, res)
	if err != nil {
		return res, fmt.Errorf("snapshot %s was taken, but freeing space for the size cap failed: %w", res.ID.Short(), err)
	}
	for _, d := range capped.plan.Drops {
		res.Dropped = append(res.Dropped, d.ID)
	}
	res.BytesFreed = capped.bytesFreed
	if !capped.fits {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the store needs %d bytes, more than its %d-byte cap, for pinned and newest snapshots", capped.projected, opts.MaxStoreSize))
	}
	return res, nil
}

// bulkTree is the size of the files of a tree from which its snapshot
// compresses full blocks at zstd's default level instead of the better
// one (cas.Writer.SetBulk): a first snapshot of GOROOT/src (W1, 126 MB)
// took 0.70x the time and CPU and held them steady from run to run, for
// 4.5% more bytes; a project under it (W3's, 16 MB) keeps the better
// level, whose 7% smaller first pack most of its store is.
var bulkTree int64 = 64 << 20

// listing is the tree a snapshot listed while its hold began (l nil:
// not listed yet).
type listing struct {
	l   *scan.Listing
	err error
}

// listOptions are the options of a snapshot's walk of its tree.
func (s *Store) listOptions(opts SnapshotOptions) scan.Options {
	return scan.Options{MaxFileSize: opts.MaxFileSize, MaxFiles: opts.MaxFiles, Exclude: opts.Exclude, MaxDirFiles: opts.MaxDirFiles,
		Skip: s.skipDirs(), Capture: opts.capture, KeepTree: opts.keepTree}
}

// snapshot is Snapshot under a held lock, of the tree listed (or, when
// not listed yet, listed now).
func (ss *hold) snapshot(ctx context.Context, workdir string, opts SnapshotOptions, listed listing) (SnapshotResult, error) {
	var p *pendingSnapshot
	err := ss.Read(func(v view) (err error) {
		p, err = ss.scanSnapshot(ctx, v, workdir, opts, listed, nil)
		return err
	})
	if err != nil {
		return SnapshotResult{Project: workdir}, err
	}
	return ss.commitSnapshot(ctx, p)
}

// pendingSnapshot is a scanned tree whose new objects are written to packs
// but not committed: commitSnapshot records it, abort drops it.
type pendingSnapshot struct {
	workdir string
	opts    SnapshotOptions
	w       *cas.Writer
	scanned scan.Result
	newest  *record // the project's newest snapshot when the scan began
	project index.Project
	known   bool    // the project was in the index
	rec     *record // the record to add; nil when the tree is the newest's
	at      time.Time
	// turn is the change of a turn that the scan planned, its backup
	// stored through w (nil: none); extra is the Writer of a backup that
	// the commit had to store (see commitTurn).
	turn  *turnChange
	extra *cas.Writer
	// scanStored is what the scan stored through w: for an unchanged tree,
	// objects the index lacked (see touch).
	scanStored cas.WriteStats
	// stored is what w deduplicates against; healed is set when heal
	// stored through w objects found damaged in the store.
	stored *healingExisting
	healed bool

	// parent is the identity of workdir's parent directory when the scan
	// began (zero: unknown), which the orphan rule needs.
	parent index.DirID
}

// abort removes the pending snapshot's packs.
func (p *pendingSnapshot) abort() {
	p.w.Abort()
	if p.extra != nil {
		p.extra.Abort()
	}
}

// scanSnapshot scans workdir in view v, storing what the tree needs
// through a new Writer (seen through wrap, when not nil, so a caller can
// also keep what is put), and, unless the tree is the newest snapshot's,
// the backup of the record to add; and the backup of the turn record that
// the snapshot changes, if any (see turnUpdate).
func (ss *hold) scanSnapshot(ctx context.Context, v view, workdir string, opts SnapshotOptions, listed listing, wrap func(cas.Putter) cas.Putter) (*pendingSnapshot, error) {
	p := &pendingSnapshot{workdir: workdir, opts: opts}
	snaps, err := v.Tx.Snapshots(workdir)
	if err == nil {
		p.project, p.known, err = v.Tx.Project(workdir)
	}
	if err != nil {
		return nil, err
	}
	if len(snaps) > 0 {
		p.newest = &snaps[0]
	}
	p.parent, _ = repo.DirIdentity(filepath.Dir(workdir))
	p.stored = &healingExisting{Existing: repo.DedupeAgainst(v.Tx, v.Objects), damaged: map[cas.ID]bool{}}
	p.w = ss.s.newWriter(p.stored)
	var put cas.Putter = p.w
	if wrap != nil {
		put = wrap(p.w)
	}
	if listed.l == nil && listed.err == nil {
		listed.l, listed.err = scan.List(ctx, workdir, ss.s.listOptions(opts))
	}
	err = listed.err
	if err == nil {
		if listed.l.Bytes() >= bulkTree {
			p.w.SetBulk()
		}
		p.scanned, err = listed.l.Store(put, v.Tx.StatCache(workdir), v.Objects, opts.Progress)
	}
	if err != nil {
		p.abort()
		if errors.Is(err, scan.ErrTooManyFiles) {
			err = fmt.Errorf("%w: %w", ErrRefused, err)
		}
		return nil, err
	}
	p.scanStored = p.w.Stats()
	restorer.RemoveLeftovers(workdir, p.scanned.Leftovers) // a killed restore's temporary files
	root := p.scanned.Root
	p.at = ss.s.opts.Now()
	snap := cas.ID{} // what the turn is recorded against
	if p.newest != nil {
		snap = p.newest.ID
	}
	// A tree equal to the newest's taken with other exclusions is recorded
	// all the same, so that a restore of this snapshot applies these.
	unchanged := (p.newest != nil && p.newest.Root == root && sameExclusions(*p.newest, opts)) || (p.newest == nil && root == manifest.EmptyTreeID)
	if !unchanged {
		if err := p.newRecord(ctx, v.Tx); err != nil {
			p.abort()
			return nil, err
		}
		snap = p.rec.ID
	} // else nothing to record: every object the tree needs is stored already
	if p.turn, err = planTurn(ctx, v.Tx, p.w, workdir, opts, snap, p.at); err != nil {
		p.abort()
		return nil, err
	}
	return p, nil
}

// newRecord makes the record of the scanned tree that p adds, and stores
// its backup through p's Writer.
func (p *pendingSnapshot) newRecord(ctx context.Context, tx *index.Tx) error {
	root := p.scanned.Root
	p.rec = &record{ID: index.NewSnapshotID(p.workdir, root, p.at, p.opts.Reason), Project: p.workdir, Root: root, Time: p.at,
		Reason: p.opts.Reason, Stats: index.Stats{Files: p.scanned.Files, Bytes: p.scanned.Bytes}, MaxFileSize: p.scanned.MaxFileSize,
		Exclude: p.opts.Exclude, MaxDirFiles: p.opts.MaxDirFiles, Session: p.opts.Session, Turn: p.opts.Turn}
	var err error
	p.rec.BackupID, err = repo.PutBackup(ctx, p.w, *p.rec, tx.NextSeq(p.workdir), "")
	return err
}

// commitSnapshot records a pending snapshot, unless its tree equals the
// project's newest snapshot (and it healed nothing: see heal). Once the tree is scanned the commit runs to
// the end whatever ctx says.
func (ss *hold) commitSnapshot(ctx context.Context, p *pendingSnapshot) (SnapshotResult, error) {
	ctx = context.WithoutCancel(ctx)
	res := SnapshotResult{Project: p.workdir}
	scanned := &p.scanned // not a copy: commitAhead drops parts of it
	res.Files, res.Bytes, res.Hashed, res.Warnings = scanned.Files, scanned.Bytes, scanned.Hashed, scanned.Warnings
	res.Unreadable, res.ExcludedByDefault = scanned.Unreadable, scanned.ExcludedByDefault
	if p.rec == nil {
		if p.newest != nil {
			res.ID = p.newest.ID
		}
		return res, ss.touch(ctx, p, &res)
	}
	err := p.w.Flush(ctx)
	if err == nil {
		err = refuseOverHalfCap(p.workdir, p.w.Stats().StoredBytes, p.opts.MaxStoreSize)
	}
	if err == nil {
		err = ss.commitAhead(ctx, p) // a big snapshot's objects and stat cache
	}
	if err != nil {
		p.abort()
		return res, err
	}
	var raced *record // a snapshot of the same tree that another process committed meanwhile
	err = ss.Update(func(tx *index.Tx) error {
		snaps, err := tx.Snapshots(p.workdir)
		if err != nil {
			return err
		}
		if len(snaps) > 0 && snaps[0].Root == scanned.Root && sameExclusions(snaps[0], p.opts) && !p.healed {
			raced = &snaps[0]
			return errSameAsNewest
		}
		if p.rec.Added, err = commitObjects(ctx, tx, p.w, p.healed, p.workdir, p.rec.Time, p.rec.Time, p.parent); err != nil {
			return err
		}
		if err := tx.AddSnapshot(p.rec); err != nil {
			return err
		}
		if err := tx.UpdateStatCache(p.workdir, scanned.CachePut, scanned.CacheRemove); err != nil {
			return err
		}
		if err := ss.commitTurn(ctx, tx, p, p.rec.ID, &res); err != nil {
			return err
		}
		if res.Dropped, err = applyKeep(tx, p.workdir, p.opts, p.at); err != nil {
			return err
		}
		if res.packBytes, err = repo.PackBytes(tx); err != nil {
			return err
		}
		if err := tx.AddPendingDrops(len(res.Dropped)); err != nil {
			return err
		}
		res.collectDue = len(res.Dropped) > 0 && tx.PendingDrops() >= autoCollectAfter
		noteInline(tx, &res)
		return ss.publish(ctx, tx, p, &res) // last: a store in a bucket's commit point
	})
	if errors.Is(err, errSameAsNewest) {
		p.abort() // nothing to record: the other process recorded this tree
		res.ID = raced.ID
		// The turn is recorded against the other process's snapshot.
		p.rec, p.newest, p.extra, p.scanStored = nil, raced, nil, cas.WriteStats{}
		p.w = ss.s.newWriter(nil)
		if err := ss.Read(func(v view) (err error) {
			p.turn, err = planTurn(ctx, v.Tx, p.w, p.workdir, p.opts, raced.ID, p.at)
			return err
		}); err != nil {
			p.abort()
			return res, err
		}
		return res, ss.touch(ctx, p, &res)
	}
	if err != nil {
		p.abort()
		return res, err
	}
	res.Created, res.ID, res.Stored = true, p.rec.ID, p.w.Stats()
	return res, nil
}

// touch records an unchanged tree's scan: the stat cache's changes, the
// project's last touch when it is older than touchGranularity or its
// parent's identity when it changed, the turn it starts or ends, and, in
// a store in a directory, the objects of the tree that the index lacked
// (lost, and dropped from the index by a repair: the tree's files still
// hold them). An unchanged tree with nothing to record costs no write.
func (ss *hold) touch(ctx context.Context, p *pendingSnapshot, res *SnapshotResult) error {
	now := ss.s.opts.Now()
	cacheChanged := len(p.scanned.CachePut) > 0 || len(p.scanned.CacheRemove) > 0
	parentChanged := !p.parent.IsZero() && p.parent != p.project.Parent
	touched := p.known && (now.Sub(p.project.LastTouch) >= touchGranularity || parentChanged)
	// What the scan of the newest snapshot's tree stored, the index lacked:
	// kept. A journal (a bucket's) publishes packs only with records: it
	// keeps the writer's objects only with a turn's.
	restored := !ss.s.repo.Backend().Features().Journaled && p.newest != nil && p.scanStored.Objects > 0
	if p.turn == nil && !restored {
		p.abort() // the Writer holds nothing to keep
		if !cacheChanged && !touched {
			return nil
		}
	} else if err := p.w.Flush(ctx); err != nil { // the turn's backup, the objects stored again
		p.abort()
		return err
	}
	if restored {
		res.Stored = p.scanStored
	}
	err := ss.Update(func(tx *index.Tx) error {
		switch {
		case p.turn != nil || restored:
			if _, err := commitObjects(ctx, tx, p.w, false, p.workdir, now, now, p.parent); err != nil {
				return err
			}
		case p.known:
			p.project.LastTouch = now
			if !p.parent.IsZero() {
				p.project.Parent = p.parent
			}
			if err := tx.PutProject(p.project); err != nil {
				return err
			}
		}
		if err := tx.UpdateStatCache(p.workdir, p.scanned.CachePut, p.scanned.CacheRemove); err != nil {
			return err
		}
		if p.turn == nil {
			return nil
		}
		snaps, err := tx.Snapshots(p.workdir)
		if err != nil || len(snaps) == 0 {
			return err // the project was forgotten meanwhile: no turn
		}
		if err := ss.commitTurn(ctx, tx, p, snaps[0].ID, res); err != nil {
			return err
		}
		noteInline(tx, res)
		return ss.publish(ctx, tx, p, res)
	})
	if err != nil {
		p.abort()
	}
	return err
}

// commitObjects records in tx the objects w stored (with heal, at their
// new locations, replacing damaged ones) and a touch of project workdir at
// touched (its last touch never moves back) with the identity
// of its parent directory (zero leaves it as it was), creating the
// project's record, made at created, if it is new: the first steps of
// every commit that adds snapshots (a snapshot's, an import's). It returns
// what w added to the store.
func commitObjects(ctx context.Context, tx *index.Tx, w *cas.Writer, heal bool, workdir string, created, touched time.Time, parent index.DirID) (index.Added, error) {
	packs, err := w.Commit(ctx, tx.Objects(), heal || repo.Relocates(tx))
	if err != nil {
		return index.Added{}, err
	}
	added := index.Added{Raw: w.Stats().RawBytes}
	for _, pi := range packs {
		added.Bytes += pi.Size
	}
	p, ok, err := tx.Project(workdir)
	if err != nil {
		return added, err
	}
	if !ok {
		p = index.Project{Workdir: workdir, Created: created}
	}
	if touched.After(p.LastTouch) {
		p.LastTouch = touched
	}
	if !parent.IsZero() {
		p.Parent = parent
	}
	return added, tx.PutProject(p)
}

// touchGranularity: a no-change snapshot refreshes the project's last touch
// only when it is older than this, so that an unchanged tree costs no write.
const touchGranularity = 10 * time.Minute

// publish publishes the commit of pending snapshot p to the hold's
// journal, last in the transaction tx that commits it: its snapshot
// record (when it makes one), the turn record it changed, and the packs
// tx recorded; then the drop of each snapshot the keep rule dropped.
func (ss *hold) publish(ctx context.Context, tx *index.Tx, p *pendingSnapshot, res *SnapshotResult) error {
	c := repo.Commit{Workdir: p.workdir, Snapshot: p.rec}
	if res.TurnStarted || res.TurnEnded {
		tr, ok, err := tx.Turn(p.workdir, p.opts.Turn)
		if err != nil {
			return err
		}
		if ok {
			c.Turn = &tr
		}
	}
	if err := ss.Journal().Commit(ctx, tx, c); err != nil {
		return err
	}
	for _, id := range res.Dropped {
		if err := ss.Journal().Dropped(ctx, tx, id); err != nil {
			return err
		}
	}
	return nil
}
