package casckpt

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/manifest"
	"github.com/casckpt/casckpt/repo"
)

// DamagedSnapshot is a snapshot Verify found missing data for.
type DamagedSnapshot struct {
	Project string
	ID      cas.ID
	Reason  string
}

// DamagedObject is an object of a bucket store that syncs skip: a commit
// that does not decode, is too large, or names a pack of another size
// than it says. Its key is relative to the store's prefix.
type DamagedObject struct {
	Key    string
	Reason string
}

// VerifyResult says what Verify checked and found.
type VerifyResult struct {
	SnapshotsChecked int
	ObjectsChecked   int
	Damaged          []DamagedSnapshot
	// Rejected are the objects of a bucket store that its fleet key
	// refused (Options.FleetKey), which every command ignores. Never nil.
	Rejected []RejectedObject
	// DamagedObjects are the objects of a bucket store that syncs
	// skipped (none for a store in a directory).
	DamagedObjects []DamagedObject
}

// RejectedObject is an object of the bucket that the fleet key refused:
// its key (under the store's prefix) and why.
type RejectedObject struct {
	Key    string
	Reason string
}

// Verify reads every tree and chunk every snapshot refers to and checks it
// against its hash, and each snapshot's and each turn's record backup
// against its record (a damaged turn backup is reported against the
// turn's start snapshot). Each object is read once. For a bucket store it
// names the objects syncs skipped as damaged. It brings the records fully
// up to date first (repo.Backend.Refresh's force); on a bucket store, where
// gc may delete the packs of snapshots another machine dropped meanwhile,
// a pack found missing makes it bring them up to date and check again
// once, so that a dropped snapshot is not reported damaged.
func (s *Store) Verify(ctx context.Context) (VerifyResult, error) {
	res, missing, err := s.verify(ctx)
	if err == nil && missing && s.repo.Backend().Features().Journaled {
		res, _, err = s.verify(ctx)
	}
	return res, err
}

// verify is one run of Verify, after a forced refresh; missing says
// whether a pack was missing.
func (s *Store) verify(ctx context.Context) (res VerifyResult, missing bool, err error) {
	res = VerifyResult{Damaged: []DamagedSnapshot{}, Rejected: []RejectedObject{}}
	damage := func(workdir string, id cas.ID, err error) {
		missing = missing || errors.Is(err, cas.ErrMissingPack)
		res.Damaged = append(res.Damaged, DamagedSnapshot{Project: workdir, ID: id, Reason: err.Error()})
	}
	err = s.readWith(ctx, repo.BeginOptions{Fresh: true}, func(v view) error {
		if err := v.Tx.Journal().EachRejected(func(key, why string) error {
			res.Rejected = append(res.Rejected, RejectedObject{Key: key, Reason: why})
			return nil
		}); err != nil {
			return err
		}
		damaged, err := damagedObjects(v.Tx)
		if err != nil {
			return err
		}
		res.DamagedObjects = damaged
		check := newDataCheck(v.Objects)
		backups := 0
		err = v.Tx.EachProject(func(p index.ProjectSnapshots) error {
			for _, sn := range p.Snapshots {
				res.SnapshotsChecked++
				err := check.snapshot(ctx, sn)
				if err == nil && !sn.BackupID.IsZero() {
					backups++
					err = repo.VerifyBackup(ctx, v.Objects, sn)
				}
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if err != nil {
					damage(p.Workdir, sn.ID, err)
				}
			}
			turns, err := v.Tx.Turns(p.Workdir)
			for _, tr := range turns {
				if tr.BackupID.IsZero() {
					continue
				}
				backups++
				if err := repo.VerifyTurnBackup(ctx, v.Objects, tr); err != nil {
					damage(p.Workdir, tr.Start, err)
				}
			}
			return err
		})
		res.ObjectsChecked = len(check.chunks) + len(check.trees) + backups
		return err
	})
	return res, missing, err
}

// damagedObjects returns the objects of the bucket that syncs skipped as
// damaged (none for a store in a directory).
func damagedObjects(tx *index.Tx) ([]DamagedObject, error) {
	out := []DamagedObject{}
	err := tx.Journal().EachDamaged(func(key, reason string) error {
		out = append(out, DamagedObject{Key: key, Reason: reason})
		return nil
	})
	return out, err
}

// dataCheck reads and checks the trees and chunks of snapshots, each
// object once however many snapshots share it: whole subtrees already
// found intact or damaged are not walked again.
type dataCheck struct {
	g      cas.Getter
	chunks map[cas.ID]error
	trees  map[cas.ID]error
}

func newDataCheck(g cas.Getter) *dataCheck {
	return &dataCheck{g: g, chunks: map[cas.ID]error{}, trees: map[cas.ID]error{}}
}

// snapshot checks every object below sn's root; its error names the first
// damaged path.
func (c *dataCheck) snapshot(ctx context.Context, sn record) error {
	return c.tree(ctx, sn.Root, "/")
}

func (c *dataCheck) tree(ctx context.Context, id cas.ID, dir string) error {
	if err, ok := c.trees[id]; ok {
		return err
	}
	err := func() error {
		t, err := manifest.Load(ctx, c.g, id)
		if err != nil {
			return fmt.Errorf("directory %s: %w", dir, err)
		}
		for _, e := range t.Entries {
			p := path.Join(dir, e.Name)
			for _, id := range e.Chunks {
				if err := c.chunk(ctx, id); err != nil {
					return fmt.Errorf("%s: %w", p, err)
				}
			}
			if e.Kind == manifest.KindDir {
				if err := c.tree(ctx, e.Tree, p); err != nil {
					return err
				}
			}
		}
		return nil
	}()
	if ctx.Err() == nil {
		c.trees[id] = err
	}
	return err
}

func (c *dataCheck) chunk(ctx context.Context, id cas.ID) error {
	if err, ok := c.chunks[id]; ok {
		return err
	}
	_, err := c.g.Get(ctx, id)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	c.chunks[id] = err
	return err
}
