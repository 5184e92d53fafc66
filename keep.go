package casckpt

import (
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
)

// turnKeep returns the rule of applyKeep with opts.KeepTurns. The turns
// kept are the project's KeepTurns newest and those started in the last
// KeepDays days; a snapshot is kept when it is no older (by sequence) than
// the oldest remaining start or end of a kept turn, or was taken in those
// days. A project with fewer turns keeps every snapshot.
func turnKeep(tx *index.Tx, workdir string, snaps []index.Snapshot, opts SnapshotOptions, now time.Time) (func(int, index.Snapshot) bool, error) {
	turns, err := tx.Turns(workdir)
	if err != nil {
		return nil, err
	}
	if len(turns) < opts.KeepTurns {
		return func(int, index.Snapshot) bool { return true }, nil
	}
	since := now.AddDate(0, 0, -max(opts.KeepDays, 0))
	kept := map[cas.ID]bool{}
	for i, t := range turns {
		if i < opts.KeepTurns || !t.Started.Before(since) {
			kept[t.Start], kept[t.End] = true, true
		}
	}
	var fromSeq uint64 // 0: no snapshot of those turns is left
	for _, sn := range snaps {
		if kept[sn.ID] && (fromSeq == 0 || sn.Seq < fromSeq) {
			fromSeq = sn.Seq
		}
	}
	return func(_ int, sn index.Snapshot) bool {
		return (fromSeq > 0 && sn.Seq >= fromSeq) || !sn.Time.Before(since)
	}, nil
}

// applyKeep drops a project's unpinned snapshots beyond the newest
// opts.Keep or, with opts.KeepTurns, those older than both the start of
// the KeepTurns newest turns and opts.KeepDays days before now.
func applyKeep(tx *index.Tx, workdir string, opts SnapshotOptions, now time.Time) ([]cas.ID, error) {
	dropped := []cas.ID{}
	pol, err := tx.Policy(workdir)
	if err != nil || pol.NoCleanup {
		return dropped, err
	}
	if opts.keepDefault && pol.Keep > 0 {
		opts.Keep = pol.Keep
	}
	if opts.Keep < 0 && opts.KeepTurns <= 0 {
		return dropped, nil
	}
	snaps, err := tx.Snapshots(workdir)
	if err != nil {
		return dropped, err
	}
	keep := func(i int, _ index.Snapshot) bool { return i < opts.Keep }
	if opts.KeepTurns > 0 {
		if keep, err = turnKeep(tx, workdir, snaps, opts, now); err != nil {
			return dropped, err
		}
	}
	for i, sn := range snaps {
		if keep(i, sn) || sn.Pinned {
			continue
		}
		if err := tx.DeleteSnapshot(sn); err != nil {
			return dropped, err
		}
		dropped = append(dropped, sn.ID)
	}
	return dropped, nil
}
