package casckpt_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/testtree"
)

// TestConcurrentSnapshotsAndGC runs writers on shared and separate projects
// while gc and prune loop, then checks that every snapshot still restores
// exactly what was captured.
func TestConcurrentSnapshotsAndGC(t *testing.T) {
	ctx := context.Background()
	s := openStoreWith(t, casckpt.Options{LockTimeout: time.Minute})
	rounds := 8
	if testing.Short() {
		rounds = 3
	}
	shared := t.TempDir()
	testtree.Write(t, shared, testtree.Tree{"shared.txt": {Data: "same for everyone"}})
	type taken struct {
		project string
		id      casckpt.Ref
		tree    testtree.Tree
	}
	var mu sync.Mutex
	var all []taken
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 100)
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			proj := t.TempDir()
			for r := range rounds {
				testtree.Write(t, proj, testtree.Tree{
					fmt.Sprintf("f%d.txt", r%3): {Data: fmt.Sprintf("writer %d round %d", w, r)},
					"common.txt":                {Data: "identical in every project"},
				})
				res, err := s.Snapshot(ctx, proj, casckpt.SnapshotOptions{Keep: 2})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				all = append(all, taken{proj, casckpt.Ref(res.ID.String()), testtree.Read(t, proj)})
				mu.Unlock()
				if _, err := s.Snapshot(ctx, shared, casckpt.SnapshotOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var gcWG sync.WaitGroup
	gcWG.Add(1)
	go func() {
		defer gcWG.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.GC(ctx); err != nil {
				errs <- fmt.Errorf("gc: %w", err)
				return
			}
			if _, err := s.Prune(ctx, casckpt.PruneOptions{}); err != nil {
				errs <- fmt.Errorf("prune: %w", err)
				return
			}
		}
	}()
	wg.Wait()
	close(stop)
	gcWG.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	verifyClean(t, s)
	// The snapshots still listed (keep 2 dropped the others) restore exactly.
	restored := 0
	for _, tk := range all {
		l, _ := s.List(ctx, tk.project, 0)
		listed := false
		for _, e := range l {
			listed = listed || casckpt.Ref(e.ID.String()) == tk.id
		}
		if !listed {
			continue
		}
		if _, err := s.Restore(ctx, tk.project, tk.id, casckpt.RestoreOptions{}); err != nil {
			t.Fatal(err)
		}
		if d := testtree.Equal(tk.tree, testtree.Read(t, tk.project)); d != "" {
			t.Fatalf("restore after concurrent gc: %s", d)
		}
		restored++
	}
	if restored < 6 {
		t.Fatalf("only %d snapshots were left to restore", restored)
	}
}

// TestRacingSnapshotsOfOneTreeRecordItOnce: processes that snapshot the same
// changed tree at once each wait their turn, and only the first records it;
// the others report it as the newest, unchanged.
func TestRacingSnapshotsOfOneTreeRecordItOnce(t *testing.T) {
	ctx := context.Background()
	s := openStoreWith(t, casckpt.Options{LockTimeout: time.Minute})
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{"a.txt": {Data: "one"}})
	if _, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	testtree.Write(t, dir, testtree.Tree{"a.txt": {Data: "two"}})
	const racers = 4
	// Every racer has read the changed file before any may commit.
	var hashed sync.WaitGroup
	hashed.Add(racers)
	results := make([]casckpt.SnapshotResult, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var once sync.Once
			res, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{Progress: func(int64, int64) {
				once.Do(func() { hashed.Done(); hashed.Wait() })
			}})
			if err != nil {
				t.Error(err)
			}
			results[i] = res
		}()
	}
	wg.Wait()
	created := 0
	for _, r := range results {
		if r.Created {
			created++
		}
		if r.ID != results[0].ID {
			t.Fatalf("racers report different snapshots: %v and %v", r.ID, results[0].ID)
		}
	}
	list, err := s.List(ctx, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if created != 1 || len(list) != 2 {
		t.Fatalf("%d racers of one tree: %d created, %d listed; want 1 created, 2 listed", racers, created, len(list))
	}
}
