package casckpt

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/repo"
)

// The lifecycle states of a project (Policy.Lifecycle).
const (
	LifecycleRunning   = "running"
	LifecycleCompleted = "completed"
	LifecycleFailed    = "failed"
)

// Policy is a project's lifecycle and retention policy, which prune
// applies (PruneOptions). The default policy has no lifecycle, is not a
// test, has no own retention or keep, and Cleanup true.
type Policy struct {
	Project string
	// Lifecycle is "" (none), LifecycleRunning, LifecycleCompleted or
	// LifecycleFailed; LifecycleSince is when it last changed (the
	// store's clock), zero with none.
	Lifecycle      string
	LifecycleSince time.Time
	// Test: a prune drops the project as soon as it is completed or failed.
	Test bool
	// RetentionDays, when positive, is how many days after it completed
	// or failed a prune drops the project, over PruneOptions'.
	RetentionDays int
	// Keep, when positive, is the keep rule of every snapshot of the
	// project whose SnapshotOptions.Keep is zero.
	Keep int
	// Cleanup is false when no rule may drop the project's snapshots
	// (keep, prune's rules, the size cap).
	Cleanup bool
}

// PolicyChange says what SetPolicy changes: a nil field is left as it is.
// A Lifecycle of "" clears the lifecycle; RetentionDays and Keep of 0
// clear the project's own value.
type PolicyChange struct {
	Lifecycle     *string
	Test          *bool
	RetentionDays *int
	Keep          *int
	Cleanup       *bool
}

// check refuses a lifecycle not known and negative counts.
func (c PolicyChange) check() error {
	if c.Lifecycle != nil {
		switch *c.Lifecycle {
		case "", LifecycleRunning, LifecycleCompleted, LifecycleFailed:
		default:
			return fmt.Errorf("policy: %w: lifecycle %q is not running, completed or failed", ErrRefused, *c.Lifecycle)
		}
	}
	if (c.RetentionDays != nil && *c.RetentionDays < 0) || (c.Keep != nil && *c.Keep < 0) {
		return fmt.Errorf("policy: %w: retention days and keep cannot be negative", ErrRefused)
	}
	return nil
}

// apply returns p changed as c says at time now.
func (c PolicyChange) apply(p index.Policy, now time.Time) index.Policy {
	if c.Lifecycle != nil && *c.Lifecycle != p.Lifecycle {
		p.Lifecycle, p.LifecycleSince = *c.Lifecycle, now
		if p.Lifecycle == "" {
			p.LifecycleSince = time.Time{}
		}
	}
	if c.Test != nil {
		p.Test = *c.Test
	}
	if c.RetentionDays != nil {
		p.RetentionDays = *c.RetentionDays
	}
	if c.Keep != nil {
		p.Keep = *c.Keep
	}
	if c.Cleanup != nil {
		p.NoCleanup = !*c.Cleanup
	}
	p.Set = now
	return p
}

// SetPolicy changes the policy of the project in directory dir as c says
// and returns it. It records the project if the store lacks it (dir must
// be a directory), and on a store in a bucket publishes the policy there
// for every machine (of two changes, the later by the clock wins).
func (s *Store) SetPolicy(ctx context.Context, dir string, c PolicyChange) (Policy, error) {
	workdir, err := Workdir(dir)
	if err != nil {
		return Policy{}, err
	}
	if err := c.check(); err != nil {
		return Policy{}, err
	}
	ss, err := s.begin(ctx, false, true)
	if err != nil {
		return Policy{}, err
	}
	defer ss.End()
	var out index.Policy
	err = ss.Update(func(tx *index.Tx) error {
		now := s.opts.Now()
		if _, ok, err := tx.Project(workdir); err != nil || !ok {
			if err != nil {
				return err
			}
			parent, _ := repo.DirIdentity(filepath.Dir(workdir))
			if err := tx.PutProject(index.Project{Workdir: workdir, Created: now, LastTouch: now, Parent: parent}); err != nil {
				return err
			}
		}
		cur, err := tx.Policy(workdir)
		if err != nil {
			return err
		}
		out = c.apply(cur, now)
		if err := tx.PutPolicy(out); err != nil {
			return err
		}
		if err := s.putPolicyBackup(ctx, tx, out); err != nil {
			return err
		}
		return ss.Journal().Policy(ctx, tx, out)
	})
	if err != nil {
		return Policy{}, fmt.Errorf("policy of %s: %w", workdir, err)
	}
	return policyOf(out), nil
}

// putPolicyBackup stores the backup of policy p, which tx records, in a
// pack of its own before tx commits, on a store whose database is the
// truth: a repair of a lost database rebuilds the policy from it (the
// newest by set time wins), and gc keeps it while p is the project's
// policy. A bucket keeps policies in its journal instead.
func (s *Store) putPolicyBackup(ctx context.Context, tx *index.Tx, p index.Policy) error {
	if s.repo.Backend().Features().Journaled {
		return nil
	}
	w := cas.NewWriter(s.repo.Packs(), nil)
	if _, err := w.Put(ctx, cas.KindRecord, index.EncodePolicyBackup(p)); err != nil {
		w.Abort()
		return err
	}
	if err := w.Flush(ctx); err != nil {
		w.Abort()
		return err
	}
	_, err := w.Commit(ctx, tx.Objects(), false)
	return err
}

// Policy returns the policy of the project in directory dir: the default
// one for a project the store does not know.
func (s *Store) Policy(ctx context.Context, dir string) (Policy, error) {
	workdir, err := knownWorkdir(dir)
	if err != nil {
		return Policy{}, err
	}
	p := index.Policy{Workdir: workdir}
	err = s.read(ctx, func(v view) error {
		p, err = v.Tx.Policy(workdir)
		return err
	})
	return policyOf(p), err
}

// policyOf returns the Policy of record p.
func policyOf(p index.Policy) Policy {
	return Policy{Project: p.Workdir, Lifecycle: p.Lifecycle, LifecycleSince: p.LifecycleSince, Test: p.Test,
		RetentionDays: p.RetentionDays, Keep: p.Keep, Cleanup: !p.NoCleanup}
}
