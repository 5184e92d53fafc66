package repo

import (
	"context"
	"errors"
	"fmt"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
)

// VerifyBackup checks that the backup of sn's record stored in the packs
// (for repair) is there and says what the record says.
func VerifyBackup(ctx context.Context, g cas.Getter, sn index.Snapshot) error {
	b, err := g.Get(ctx, sn.BackupID)
	if err != nil {
		return fmt.Errorf("the backup of its record: %w", err)
	}
	c, _, err := index.DecodeBackup(b)
	if err != nil {
		return fmt.Errorf("the backup of its record: %w", err)
	}
	if _, path := SplitWorkdir(sn.Project); c.ID != sn.ID || c.Project != path || c.Root != sn.Root || !c.Time.Equal(sn.Time) || c.Reason != sn.Reason {
		return fmt.Errorf("the backup of its record says otherwise")
	}
	return nil
}

// VerifyTurnBackup checks that the backup of turn tr's record stored in
// the packs (for repair) is there and says what the record says.
func VerifyTurnBackup(ctx context.Context, g cas.Getter, tr index.Turn) error {
	b, err := g.Get(ctx, tr.BackupID)
	if err == nil {
		var c index.Turn
		_, path := SplitWorkdir(tr.Project)
		if c, err = index.DecodeTurnBackup(b); err == nil && (c.ID != tr.ID || c.Project != path || c.Start != tr.Start || c.End != tr.End) {
			err = errors.New("it says otherwise")
		}
	}
	if err != nil {
		return fmt.Errorf("the backup of turn %q's record: %w", tr.ID, err)
	}
	return nil
}
