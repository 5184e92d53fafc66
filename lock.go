package casckpt

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/casckpt/casckpt/repo"
)

// lockProject takes the project's writer lock, which restores and undos
// of project workdir hold while they scan, plan and change its tree, so
// that they run one at a time and each plans from what the one before
// left. It waits as the store lock does, and returns its release. The
// lock file is in the store's locks directory (cleared with the store,
// which no one clears while this hold has the store lock, which a
// hold that writes always has).
func (ss *hold) lockProject(ctx context.Context, workdir string) (func(), error) {
	dir := filepath.Join(ss.s.dir, "locks")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("project lock: %w", err)
	}
	sum := sha256.Sum256([]byte(workdir))
	name := filepath.Join(dir, "project-"+hex.EncodeToString(sum[:12]))
	deadline := time.Now().Add(ss.s.opts.LockTimeout)
	for {
		l, err := repo.LockFile(ctx, name, true, deadline, ss.s.opts.LockTimeout)
		if errors.Is(err, repo.ErrLockReplaced) {
			continue
		}
		if errors.Is(err, ErrBusy) {
			err = fmt.Errorf("%w: another restore or undo of %s held it for %s; try again when it finishes", ErrBusy, workdir, ss.s.opts.LockTimeout)
		}
		if err != nil {
			return nil, err
		}
		return l.Unlock, nil
	}
}
