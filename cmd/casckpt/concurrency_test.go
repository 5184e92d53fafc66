package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestProcessesShareAStore runs eight casckpt processes snapshotting
// separate and shared projects while a ninth loops gc, prune and repair, then checks
// that verify is clean and every snapshot restores byte for byte.
func TestProcessesShareAStore(t *testing.T) {
	bin := newBinEnv(t)
	rounds := 6
	if testing.Short() {
		rounds = 2
	}
	shared := t.TempDir()
	writeFiles(t, shared, map[string]string{"common.txt": "shared"})
	errs := make(chan error, 64)
	waitWriters := startSnapshotProcesses(t, bin, shared, rounds, errs)
	stopMaintenance := startMaintenanceProcesses(bin, errs)
	all := waitWriters()
	stopMaintenance()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if out, err := runOnStore(bin, "verify", "--json"); err != nil {
		t.Fatalf("verify after the run: %v %s", err, out)
	}
	for _, tk := range all {
		if _, err := runOnStore(bin, "restore", tk.dir, tk.id); err != nil {
			t.Fatal(err)
		}
		for p, want := range tk.files {
			if b, _ := os.ReadFile(filepath.Join(tk.dir, p)); string(b) != want {
				t.Fatalf("%s after restoring %s: %q, want %q", p, tk.id[:12], b, want)
			}
		}
		entries, _ := os.ReadDir(tk.dir)
		if len(entries) != len(tk.files) {
			t.Fatalf("restore of %s left %d entries, want %d", tk.id[:12], len(entries), len(tk.files))
		}
	}
}

// runOnStore runs casckpt with args on bin's store and returns its
// stdout. It may run on any goroutine: a failure is returned, with the
// command's stderr, not reported to the test.
func runOnStore(bin *binEnv, args ...string) ([]byte, error) {
	c := bin.command(append([]string{"--store", bin.store()}, args...)...)
	var errb bytes.Buffer
	c.Stderr = &errb
	out, err := c.Output()
	if err != nil {
		return out, fmt.Errorf("casckpt %v: %v: %s", args, err, errb.String())
	}
	return out, nil
}

// takenSnapshot is a snapshot a writer took of its own project: the
// project's directory, the snapshot's ID and the files it holds.
type takenSnapshot struct {
	dir, id string
	files   map[string]string
}

// startSnapshotProcesses starts 8 writers: the even ones each change a
// project of their own every round, the odd ones leave shared as it is,
// and every round each runs "casckpt snapshot" on its directory. A writer
// stops at its first error, sent to errs. wait waits for them all and
// returns the snapshots taken of the writers' own projects.
func startSnapshotProcesses(t *testing.T, bin *binEnv, shared string, rounds int, errs chan<- error) (wait func() []takenSnapshot) {
	var mu sync.Mutex
	var all []takenSnapshot
	var wg sync.WaitGroup
	for w := range 8 {
		dir := shared
		if w%2 == 0 {
			dir = t.TempDir()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				files := map[string]string{fmt.Sprintf("w%d.txt", w): fmt.Sprintf("writer %d round %d", w, r), "common.txt": "shared"}
				if dir != shared {
					writeFiles(t, dir, files)
				}
				out, err := runOnStore(bin, "snapshot", dir, "--json", "--keep", "100")
				if err != nil {
					errs <- err
					return
				}
				var doc struct {
					ID *string `json:"id"`
				}
				if err := json.Unmarshal(out, &doc); err != nil || doc.ID == nil {
					errs <- fmt.Errorf("snapshot output %q: %v", out, err)
					return
				}
				if dir != shared {
					mu.Lock()
					all = append(all, takenSnapshot{dir, *doc.ID, files})
					mu.Unlock()
				}
			}
		}()
	}
	return func() []takenSnapshot {
		wg.Wait()
		return all
	}
}

// startMaintenanceProcesses runs gc, prune (keeping no days) and repair,
// each a process, in a loop until stop is called, which waits for the loop
// to end. The loop stops at its first error, sent to errs.
func startMaintenanceProcesses(bin *binEnv, errs chan<- error) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			for _, args := range [][]string{{"gc"}, {"prune", "--retention-days", "0"}, {"repair"}} {
				if _, err := runOnStore(bin, args...); err != nil {
					errs <- err
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}
