package casckpt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
)

// MaxLabel is the longest session or turn ID, in bytes.
const MaxLabel = 128

// ErrBadLabel: a session or turn ID is not 1 to MaxLabel bytes of
// printable UTF-8.
var ErrBadLabel = errors.New("bad ID")

// CheckLabel returns nil when s may be a session or turn ID: 1 to MaxLabel
// bytes of printable UTF-8 (no newline, NUL or other control character),
// else an error wrapping ErrBadLabel that says why.
func CheckLabel(s string) error {
	if len(s) == 0 || len(s) > MaxLabel {
		return fmt.Errorf("%w: it has %d bytes; give 1 to %d bytes of printable UTF-8", ErrBadLabel, len(s), MaxLabel)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: it is not UTF-8", ErrBadLabel)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("%w: it holds the unprintable character %U", ErrBadLabel, r)
		}
	}
	return nil
}

// TurnInfo is one turn of an agent in a project: what changed between the
// snapshot it started on and the one it ended on is the agent's.
type TurnInfo struct {
	ID      string // the host's turn ID
	Session string // the host's session ID ("" when it gave none)
	Project string
	Start   cas.ID // the snapshot the turn started on
	End     cas.ID // the snapshot it ended on; zero while it is open
	// StartAt and EndAt are where those snapshots stand in the project
	// (#N and @N); zero when the snapshot was dropped or the turn is open.
	StartAt, EndAt SnapshotPlace
	Started        time.Time // when it started
	Ended          time.Time // when it ended; zero while it is open
	// StartDropped and EndDropped say that the snapshot the turn started or
	// ended on was dropped (by keep, the size cap, prune or forget): the
	// turn is still listed but can no longer be undone. A turn goes when
	// none of its snapshots is left.
	StartDropped bool
	EndDropped   bool
	// FilesChanged, Insertions and Deletions compare the start with the end,
	// as List compares a snapshot with the one before it; zero while the
	// turn is open or when a snapshot of it was dropped.
	FilesChanged int64
	Insertions   int64
	Deletions    int64
	// Damaged is set when the counts could not be computed because the
	// snapshots' data is missing or corrupt.
	Damaged bool
	// Title is the turn's title (see TurnTitle); "" when it has none.
	Title string
	// Interrupted: the turn was ended by the start of the next one.
	Interrupted bool
	// UndoneBy is the pre-undo snapshot of the undo that reverted the
	// turn; zero when it is not undone (or was redone since).
	UndoneBy cas.ID
}

// MaxTitle is the most characters a turn's title keeps.
const MaxTitle = 120

// TurnTitle returns the title a turn gets from text (a prompt): its first
// non-blank line, with control and other unprintable characters removed,
// trimmed, and cut to MaxTitle characters.
func TurnTitle(text string) string {
	for line := range strings.Lines(strings.ToValidUTF8(text, "")) {
		t := strings.TrimSpace(strings.Map(func(r rune) rune {
			if unicode.IsPrint(r) {
				return r
			}
			if unicode.IsSpace(r) {
				return ' '
			}
			return -1
		}, line))
		if t == "" {
			continue
		}
		if r := []rune(t); len(r) > MaxTitle {
			t = strings.TrimSpace(string(r[:MaxTitle]))
		}
		return t
	}
	return ""
}

// Open reports whether the turn has not ended.
func (t TurnInfo) Open() bool { return t.End.IsZero() }

// Undoable returns nil when the turn can be undone, else a one-line error
// (wrapping ErrRefused) that says why: it is open, or a snapshot of it was
// dropped.
func (t TurnInfo) Undoable() error {
	switch {
	case t.Open():
		return fmt.Errorf("%w: turn %q is still open; end it first (snapshot --turn %s --end-turn)", ErrRefused, t.ID, t.ID)
	case t.StartDropped:
		return fmt.Errorf("%w: turn %q cannot be undone: the snapshot it started on, %s, was dropped", ErrRefused, t.ID, t.Start.Short())
	case t.EndDropped:
		return fmt.Errorf("%w: turn %q cannot be undone: the snapshot it ended on, %s, was dropped", ErrRefused, t.ID, t.End.Short())
	}
	return nil
}

// Turns returns the turns of the project in dir, newest first (by start),
// only those of session unless it is "", with the changes each made.
func (s *Store) Turns(ctx context.Context, dir, session string) ([]TurnInfo, error) {
	workdir, err := s.readWorkdir(dir)
	if err != nil {
		return nil, err
	}
	var out []TurnInfo
	err = s.readCounting(ctx, func(v view, cc *countCache) error {
		var roots map[cas.ID]cas.ID
		out, roots, err = projectTurns(v.Tx, workdir, session)
		if err != nil {
			return err
		}
		for i := range out {
			t := &out[i]
			if t.Open() || t.StartDropped || t.EndDropped {
				continue
			}
			c, err := cc.count(ctx, v, roots[t.Start], roots[t.End])
			if err != nil {
				return err
			}
			t.FilesChanged, t.Insertions, t.Deletions, t.Damaged = c.files, c.insertions, c.deletions, c.damaged
		}
		return nil
	})
	if out == nil {
		out = []TurnInfo{}
	}
	return out, err
}

// projectTurns returns the turns of project workdir in tx, newest first,
// only those of session unless it is "" (without their counts), and the
// root of each of the project's snapshots, by ID. An undo reads the turn
// it reverts through it, inside its own transaction.
func projectTurns(tx *index.Tx, workdir, session string) ([]TurnInfo, map[cas.ID]cas.ID, error) {
	snaps, err := tx.Snapshots(workdir)
	if err != nil {
		return nil, nil, err
	}
	roots := make(map[cas.ID]cas.ID, len(snaps))
	places := make(map[cas.ID]SnapshotPlace, len(snaps))
	for i, sn := range snaps {
		roots[sn.ID] = sn.Root
		places[sn.ID] = SnapshotPlace{Serial: sn.Seq, Number: i + 1}
	}
	turns, err := tx.Turns(workdir)
	if err != nil {
		return nil, nil, err
	}
	out := []TurnInfo{}
	for _, tr := range turns {
		if session != "" && tr.Session != session {
			continue
		}
		_, startKept := roots[tr.Start]
		_, endKept := roots[tr.End]
		out = append(out, TurnInfo{ID: tr.ID, Session: tr.Session, Project: tr.Project, Start: tr.Start, End: tr.End,
			StartAt: places[tr.Start], EndAt: places[tr.End],
			Started: tr.Started, Ended: tr.Ended, StartDropped: !startKept, EndDropped: !tr.Open() && !endKept,
			Title: tr.Title, Interrupted: tr.Interrupted, UndoneBy: tr.UndoneBy})
	}
	return out, roots, nil
}

// turnChange is a change of a turn record that a snapshot brings about:
// the record as it is to be, and whether it starts or ends the turn.
type turnChange struct {
	rec            index.Turn
	started, ended bool
}

// turnUpdate returns the change of a turn record that a snapshot labelled
// as opts says brings about in tx, when it is recorded against snapshot
// snap (new, or the newest when the tree is unchanged) at time at; nil
// when it changes no turn. The first snapshot with a turn ID starts the
// turn (and ends it too with EndTurn: a turn ended before it was started
// began and ended on snap); EndTurn ends an open turn on snap, and moves
// the end of an ended one to snap (the agent kept working in it; an end
// without opts.Interrupted clears the turn's interrupted mark). The
// record's BackupID is left zero.
func turnUpdate(tx *index.Tx, workdir string, opts SnapshotOptions, snap cas.ID, at time.Time) (*turnChange, error) {
	if opts.Turn == "" || snap.IsZero() {
		return nil, nil
	}
	tr, ok, err := tx.Turn(workdir, opts.Turn)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		tr = index.Turn{Project: workdir, ID: opts.Turn, Session: opts.Session, Start: snap, Started: at, Title: TurnTitle(opts.Title)}
	case !opts.EndTurn || (tr.End == snap && tr.Interrupted == opts.Interrupted):
		return nil, nil
	}
	if opts.EndTurn {
		tr.End, tr.Ended, tr.Interrupted = snap, at, opts.Interrupted
	}
	tr.BackupID = cas.ID{}
	return &turnChange{rec: tr, started: !ok, ended: opts.EndTurn}, nil
}

// planTurn is turnUpdate in the view a snapshot is scanned in; it stores
// the backup of the changed record through w, with the snapshot's data.
func planTurn(ctx context.Context, tx *index.Tx, w cas.Putter, workdir string, opts SnapshotOptions, snap cas.ID, at time.Time) (*turnChange, error) {
	c, err := turnUpdate(tx, workdir, opts, snap, at)
	if err != nil || c == nil {
		return c, err
	}
	c.rec.BackupID, err = w.Put(ctx, cas.KindRecord, index.EncodeTurnBackup(c.rec))
	return c, err
}

// commitTurn records in tx, the transaction that commits pending snapshot
// p, the change of a turn that p brings about, recorded against snapshot
// snap. The change is decided again in tx: when another process changed
// the turn since the scan planned it (two processes with one turn ID in
// one project at once), the backup of the new change is stored now, in a
// pack of its own, before the commit.
func (ss *hold) commitTurn(ctx context.Context, tx *index.Tx, p *pendingSnapshot, snap cas.ID, res *SnapshotResult) error {
	c, err := turnUpdate(tx, p.workdir, p.opts, snap, p.at)
	if err != nil || c == nil {
		return err
	}
	if p.turn != nil && bytes.Equal(index.EncodeTurnBackup(p.turn.rec), index.EncodeTurnBackup(c.rec)) {
		c = p.turn
	} else {
		p.extra = ss.s.newWriter(nil)
		if c.rec.BackupID, err = p.extra.Put(ctx, cas.KindRecord, index.EncodeTurnBackup(c.rec)); err != nil {
			return err
		}
		if err := p.extra.Flush(ctx); err != nil {
			return err
		}
		if _, err := p.extra.Commit(ctx, tx.Objects(), false); err != nil {
			return err
		}
	}
	// A turn made again exactly as one deleted before is not deleted.
	if err := tx.DeleteTombstone(c.rec.BackupID); err != nil {
		return err
	}
	res.TurnStarted, res.TurnEnded = c.started, c.ended
	return tx.PutTurn(c.rec)
}
