package bucket

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/remote"
	"github.com/casckpt/casckpt/repo"
)

// journal is one operation's way to publish to the bucket: what the sync
// at its start saw of gc (see recheck).
type journal struct {
	b    *Backend
	seen gcSeen
}

// Journal returns the journal of an operation that did not sync: it may
// drop and pin, but a commit fails cleanly (see recheck).
func (b *Backend) Journal() repo.Journal { return &journal{b: b} }

// Commit puts the commit object of c in the bucket, last in the
// transaction tx that commits it: its snapshot record (when it makes
// one), the turn record it changed, and the packs tx recorded (each was
// found stored by Writer.Commit).
func (j *journal) Commit(ctx context.Context, tx *index.Tx, c repo.Commit) error {
	b := j.b
	if err := tx.Journal().SetOwn(c.Workdir); err != nil {
		return err
	}
	rc := remote.Commit{Machine: b.machine}
	if c.Snapshot != nil {
		rc.Records = append(rc.Records, remote.Record{Kind: remote.RecordSnapshot, BackupID: c.Snapshot.BackupID, Data: index.EncodeBackup(*c.Snapshot, "")})
	}
	if c.Turn != nil {
		rc.Records = append(rc.Records, remote.Record{Kind: remote.RecordTurn, BackupID: c.Turn.BackupID, Data: index.EncodeTurnBackup(*c.Turn)})
	}
	for _, pi := range tx.AddedPacks() {
		rc.Packs = append(rc.Packs, remote.Pack{Name: pi.Name, Size: pi.Size})
	}
	if len(rc.Records) == 0 {
		return nil
	}
	if err := j.recheck(ctx); err != nil {
		return err
	}
	key := remote.CommitKey(time.Now(), rc.Records[0].BackupID) // the wall clock, not the records' clock: keys order the listing
	if err := b.objects.PutNew(ctx, key, b.key.Seal(key, remote.EncodeCommit(rc))); err != nil {
		return fmt.Errorf("publish the snapshot's commit: %w", err)
	}
	if err := j.recheck(ctx); errors.Is(err, errGCMeanwhile) && c.Snapshot != nil {
		// Stopped between the check and the PUT: take the commit back.
		if derr := b.objects.PutNew(ctx, b.key.SignName(remote.DroppedKey(time.Now(), c.Snapshot.ID)), nil); derr != nil {
			return fmt.Errorf("%w; and the drop of the commit failed (%v): run casckpt verify", err, derr)
		}
		return err
	} else if err != nil {
		return err
	}
	return tx.Journal().SetApplied(key)
}

// Writes puts the writes that tx records in project workdir's ledger in
// the bucket, as a commit of one record, last in tx: every machine's
// cache, and a rebuilt one, applies them. The commit names no pack and no
// object.
func (j *journal) Writes(ctx context.Context, tx *index.Tx, workdir string, writes []index.Write) error {
	b := j.b
	var id cas.ID
	if _, err := rand.Read(id[:]); err != nil {
		return err
	}
	c := remote.Commit{Machine: b.machine, Records: []remote.Record{{Kind: remote.RecordWrites, BackupID: id, Data: index.EncodeWrites(workdir, writes)}}}
	key := remote.CommitKey(time.Now(), id)
	if err := b.objects.PutNew(ctx, key, b.key.Seal(key, remote.EncodeCommit(c))); err != nil {
		return fmt.Errorf("publish the recorded writes: %w", err)
	}
	return tx.Journal().SetApplied(key)
}

// Policy puts project p.Workdir's policy, which tx records, in the
// bucket as a commit of one record, last in tx: every machine's cache,
// and a rebuilt one, applies the one set last (index.Tx.ApplyPolicy).
func (j *journal) Policy(ctx context.Context, tx *index.Tx, p index.Policy) error {
	b := j.b
	if err := tx.Journal().SetOwn(p.Workdir); err != nil {
		return err
	}
	var id cas.ID
	if _, err := rand.Read(id[:]); err != nil {
		return err
	}
	c := remote.Commit{Machine: b.machine, Records: []remote.Record{{Kind: remote.RecordPolicy, BackupID: id, Data: index.EncodePolicy(p)}}}
	key := remote.CommitKey(time.Now(), id)
	if err := b.objects.PutNew(ctx, key, b.key.Seal(key, remote.EncodeCommit(c))); err != nil {
		return fmt.Errorf("publish the policy: %w", err)
	}
	return tx.Journal().SetApplied(key)
}

// Dropped puts the dropped marker of snapshot id, which tx deletes, in
// the bucket.
func (j *journal) Dropped(ctx context.Context, tx *index.Tx, id cas.ID) error {
	b := j.b
	key := b.key.SignName(remote.DroppedKey(time.Now(), id))
	if err := b.objects.PutNew(ctx, key, nil); err != nil {
		return fmt.Errorf("record the drop of %s in the bucket: %w", id.Short(), err)
	}
	if err := tx.Journal().SetApplied(key); err != nil {
		return err
	}
	return tx.Journal().SetDropped(id)
}

// Pinned puts (pinned) or deletes the pin marker of snapshot id in the
// bucket.
func (j *journal) Pinned(ctx context.Context, id cas.ID, pinned bool) error {
	b := j.b
	key := remote.PinKey(id)
	var err error
	if pinned {
		if err = b.objects.PutNew(ctx, b.key.SignName(key), nil); errors.Is(err, fs.ErrExist) {
			err = nil // pinned already, by this machine or another
		}
	} else if err = b.objects.Delete(ctx, key); err == nil && b.key != nil {
		err = b.objects.Delete(ctx, b.key.SignName(key)) // as a machine with the key put it
	}
	if err != nil {
		return fmt.Errorf("record the pin of %s in the bucket: %w", id.Short(), err)
	}
	return nil
}

// gcSeen is what a sync saw of gc: when it listed, and the pending and
// deleted lists it found.
type gcSeen struct {
	at   time.Time
	keys map[string]bool
}

// seen returns what the last sync saw of gc.
func (b *Backend) seen() gcSeen {
	b.mu.Lock()
	defer b.mu.Unlock()
	return gcSeen{at: b.synced, keys: b.gcKeys}
}

// errGCMeanwhile is the error of a commit that a gc's first phase may
// have overtaken.
var errGCMeanwhile = errors.New("a gc listed packs for deletion while this snapshot ran for over half the gc grace period, and the snapshot may reuse them; nothing was committed: run it again")

// recheck makes sure, around the PUT of a commit, that the packs the
// commit needs are safe from gc. The writer avoided every pack in the
// pending lists its operation's sync saw; a gc deletes a pack only once
// its pending list is older than the grace period, and its re-mark then
// sees every commit published before. So a commit published within half
// the grace period of the listing that saw the lists is safe. Past that,
// it lists the pack lists again (one request) and fails cleanly if a new
// pending or deleted list appeared since; else that listing is the new
// mark. The monotonic clock measures the wait, so a process stopped and
// resumed counts the time it was stopped. Commit checks before its PUT
// and after it: a process stopped between the check and the PUT drops the
// commit it just made.
func (j *journal) recheck(ctx context.Context) error {
	b := j.b
	if j.seen.at.IsZero() {
		return fmt.Errorf("publish the snapshot's commit: the operation did not sync with the bucket; run it again")
	}
	if time.Since(j.seen.at) < b.grace/2 {
		return nil
	}
	fresh, started, keys := false, time.Now(), map[string]bool{}
	err := b.objects.ListAfter(ctx, remote.PackListsDir, "", func(key string) error {
		if isPackList(key) {
			fresh = fresh || !j.seen.keys[key]
			keys[key] = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("publish the snapshot's commit: check gc's lists: %w", err)
	}
	if fresh {
		return errGCMeanwhile
	}
	j.seen = gcSeen{at: started, keys: keys}
	return nil
}
