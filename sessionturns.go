package casckpt

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"
)

// SessionTurn is a turn of a session as one project recorded it, without
// the counts of TurnInfo.
type SessionTurn struct {
	Project string
	ID      string // the host's turn ID
	Started time.Time
	Open    bool // the turn has not ended in this project
}

// SessionTurns returns the turns of session in every project (on a bucket
// store, every project this machine snapshotted itself), newest first
// (by start, then project). It lets a host that keeps no state between
// processes (a hook) find its session's newest turn and the projects a
// turn has started in, from the store alone.
func (s *Store) SessionTurns(ctx context.Context, session string) ([]SessionTurn, error) {
	out := []SessionTurn{}
	err := s.read(ctx, func(v view) error {
		projects, err := v.Tx.Projects()
		if err != nil {
			return err
		}
		for _, p := range projects {
			if !s.actsOn(v.Tx, p.Workdir) {
				continue // another machine's, or named only by the bucket
			}
			turns, err := v.Tx.Turns(p.Workdir)
			if err != nil {
				return err
			}
			for _, tr := range turns {
				if tr.Session == session {
					out = append(out, SessionTurn{Project: p.Workdir, ID: tr.ID, Started: tr.Started, Open: tr.Open()})
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("turns of session %q: %w", session, err)
	}
	slices.SortStableFunc(out, func(a, b SessionTurn) int {
		return cmp.Or(b.Started.Compare(a.Started), cmp.Compare(a.Project, b.Project))
	})
	return out, nil
}
