package index

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/casckpt/casckpt/cas"
)

// bucketTurns holds a bucket per project, with a record per turn, keyed by
// the host's turn ID.
var bucketTurns = []byte("turns")

// Turn is one turn of an agent in a project: the snapshot it began on and,
// once it ended, the one it ended on. What changed between them is the
// agent's. A turn lives as long as one of its snapshots: deleting the last
// one (the start of an open turn; the start and the end of an ended one)
// deletes the turn and gives its backup a tombstone.
type Turn struct {
	Project string
	ID      string // the host's turn ID, unique in the project
	Session string // the host's session ("" when it gave none)
	Start   cas.ID // the snapshot the turn began on
	End     cas.ID // the snapshot it ended on; zero while the turn is open
	Started time.Time
	Ended   time.Time // zero while open
	// BackupID names the backup of this record in the packs (see
	// EncodeTurnBackup), from which Repair rebuilds it.
	BackupID cas.ID
	// Title is what a person calls the turn (a hook's prompt, first line);
	// "" when the host gave none.
	Title string
	// Interrupted: the turn was ended by the start of the next one, its
	// host having never said it ended.
	Interrupted bool
	// UndoneBy is the pre-undo snapshot of the undo that reverted the
	// turn; zero when it is not undone (or was redone since).
	UndoneBy cas.ID
}

// Open reports whether the turn has not ended.
func (t Turn) Open() bool { return t.End.IsZero() }

// turnVersion is the format version of turn records. Fields added since
// (title, interrupted, undone by) are flagged, so a record without them
// reads as before.
const turnVersion = 1

// Turn record flags: which optional fields follow.
const (
	turnEnded       = 1 << iota // End and Ended
	turnBackup                  // BackupID
	turnTitle                   // Title
	turnInterrupted             // no field: Interrupted
	turnUndone                  // UndoneBy
	turnFlags       = 1<<iota - 1
)

func encodeTurn(t Turn) []byte {
	b := []byte{turnVersion}
	b = appendString(b, t.Session)
	b = append(b, t.Start[:]...)
	b = appendTime(b, t.Started)
	var flags byte
	if !t.End.IsZero() {
		flags |= turnEnded
	}
	if !t.BackupID.IsZero() {
		flags |= turnBackup
	}
	if t.Title != "" {
		flags |= turnTitle
	}
	if t.Interrupted {
		flags |= turnInterrupted
	}
	if !t.UndoneBy.IsZero() {
		flags |= turnUndone
	}
	b = append(b, flags)
	if !t.End.IsZero() {
		b = append(b, t.End[:]...)
		b = appendTime(b, t.Ended)
	}
	if !t.BackupID.IsZero() {
		b = append(b, t.BackupID[:]...)
	}
	if t.Title != "" {
		b = appendString(b, t.Title)
	}
	if !t.UndoneBy.IsZero() {
		b = append(b, t.UndoneBy[:]...)
	}
	return b
}

func decodeTurn(project, id string, v []byte) (Turn, error) {
	r := reader{b: v}
	if r.byte() != turnVersion {
		return Turn{}, fmt.Errorf("%w: turn %q of %s: unknown version", ErrCorrupt, id, project)
	}
	t := Turn{Project: project, ID: id, Session: r.string(), Start: r.id(), Started: r.time()}
	flags := r.byte()
	if flags&^turnFlags != 0 {
		r.fail("bad flags")
	}
	if flags&turnEnded != 0 {
		t.End, t.Ended = r.id(), r.time()
	}
	if flags&turnBackup != 0 {
		t.BackupID = r.id()
	}
	if flags&turnTitle != 0 {
		if t.Title = r.string(); t.Title == "" {
			r.fail("empty title") // absent, not empty: one encoding per record
		}
	}
	t.Interrupted = flags&turnInterrupted != 0
	if flags&turnUndone != 0 {
		t.UndoneBy = r.id()
	}
	if r.err == nil && (t.Start.IsZero() || (flags&turnEnded != 0 && t.End.IsZero()) || (flags&turnBackup != 0 && t.BackupID.IsZero()) ||
		(flags&turnUndone != 0 && t.UndoneBy.IsZero())) {
		r.fail("zero snapshot or backup ID")
	}
	if err := r.done(); err != nil {
		return Turn{}, fmt.Errorf("turn %q of %s: %w", id, project, err)
	}
	return t, nil
}

// Turns lists a project's turns, newest first (by start time, then ID).
func (t *Tx) Turns(workdir string) ([]Turn, error) {
	out := []Turn{}
	b := t.projectBucket(bucketTurns, workdir)
	if b == nil {
		return out, nil
	}
	err := b.ForEach(func(k, v []byte) error {
		turn, err := decodeTurn(workdir, string(k), v)
		if err != nil {
			return err
		}
		out = append(out, turn)
		return nil
	})
	slices.SortStableFunc(out, func(a, b Turn) int {
		if c := b.Started.Compare(a.Started); c != 0 {
			return c
		}
		return cmpString(b.ID, a.ID)
	})
	return out, err
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Turn returns turn id of project workdir, if it is recorded.
func (t *Tx) Turn(workdir, id string) (Turn, bool, error) {
	b := t.projectBucket(bucketTurns, workdir)
	if b == nil {
		return Turn{}, false, nil
	}
	v := b.Get([]byte(id))
	if v == nil {
		return Turn{}, false, nil
	}
	turn, err := decodeTurn(workdir, id, v)
	return turn, err == nil, err
}

// PutTurn stores turn record tr (a new turn, or one that ended).
func (t *Tx) PutTurn(tr Turn) error {
	if tr.ID == "" || tr.Start.IsZero() {
		return errors.New("index: a turn record needs an ID and a start snapshot")
	}
	root, err := t.tx.CreateBucketIfNotExists(bucketTurns)
	if err != nil {
		return err
	}
	b, err := root.CreateBucketIfNotExists([]byte(tr.Project))
	if err != nil {
		return err
	}
	return b.Put([]byte(tr.ID), encodeTurn(tr))
}

// DeleteTurn removes a turn record; a missing one is no error.
func (t *Tx) DeleteTurn(workdir, id string) error {
	if b := t.projectBucket(bucketTurns, workdir); b != nil {
		return b.Delete([]byte(id))
	}
	return nil
}

// dropTurnsOf deletes the turns of s's project that deleted snapshot s
// was the last remaining snapshot of.
func (t *Tx) dropTurnsOf(s Snapshot) error {
	turns, err := t.Turns(s.Project)
	if err != nil {
		return err
	}
	var kept map[cas.ID]bool // the project's remaining snapshots, read when needed
	for _, tr := range turns {
		if tr.Start != s.ID && tr.End != s.ID {
			continue
		}
		if kept == nil {
			snaps, err := t.Snapshots(s.Project)
			if err != nil {
				return err
			}
			kept = make(map[cas.ID]bool, len(snaps))
			for _, sn := range snaps {
				kept[sn.ID] = true
			}
		}
		if kept[tr.Start] || kept[tr.End] {
			continue
		}
		if err := t.addTombstone(tr.BackupID); err != nil {
			return err
		}
		if err := t.DeleteTurn(tr.Project, tr.ID); err != nil {
			return err
		}
	}
	return nil
}

// turnBackupVersion starts every turn backup; it differs from the first
// byte of every snapshot record backup, so the two never decode as each
// other.
const turnBackupVersion = 0x81

// EncodeTurnBackup returns the backup of turn record tr that is stored in
// the packs as an object of kind cas.KindRecord, beside the data of the
// commit that starts or ends the turn, so that Repair can rebuild it. It
// holds all of tr but BackupID.
func EncodeTurnBackup(tr Turn) []byte {
	b := []byte{turnBackupVersion}
	b = appendString(b, tr.Project)
	b = appendString(b, tr.ID)
	tr.BackupID = cas.ID{}
	return append(b, encodeTurn(tr)...)
}

// DecodeTurnBackup parses a turn backup made by EncodeTurnBackup. The
// record's BackupID is left zero: it is the ID of b.
func DecodeTurnBackup(b []byte) (Turn, error) {
	r := reader{b: b}
	if r.byte() != turnBackupVersion {
		return Turn{}, fmt.Errorf("%w: turn backup: unknown version", ErrCorrupt)
	}
	project, id := r.string(), r.string()
	if r.err != nil {
		return Turn{}, fmt.Errorf("turn backup: %w", r.err)
	}
	if !filepath.IsAbs(project) || filepath.Clean(project) != project || id == "" {
		return Turn{}, fmt.Errorf("%w: turn backup: bad project or turn ID", ErrCorrupt)
	}
	tr, err := decodeTurn(project, id, r.b)
	if err != nil {
		return Turn{}, fmt.Errorf("turn backup: %w", err)
	}
	if !tr.BackupID.IsZero() {
		return Turn{}, fmt.Errorf("%w: turn backup names a backup", ErrCorrupt)
	}
	return tr, nil
}
