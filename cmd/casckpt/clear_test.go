package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/casckpt/casckpt/internal/osfs"
)

// TestSnapshotWaitingThroughAClear: a snapshot that waits on the store lock
// while clear deletes the store makes the store again and succeeds, under a
// lock that others see, instead of writing into the deleted store.
func TestSnapshotWaitingThroughAClear(t *testing.T) {
	b := newBinEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a", "sub/b.txt": "b"})
	b.ok("snapshot", dir)
	// Hold the lock as clear does.
	lockPath := filepath.Join(b.store(), "lock")
	lock, err := os.OpenFile(lockPath, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := osfs.Lock(lock, true); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"a.txt": "changed"})
	snap := b.command("snapshot", dir, "--json")
	var out, errb bytes.Buffer
	snap.Stdout, snap.Stderr = &out, &errb
	if err := snap.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the snapshot has opened the lock file and waits on it.
	for !holdsFile(snap.Process.Pid, lockPath) {
		time.Sleep(time.Millisecond)
	}
	if err := os.RemoveAll(b.store()); err != nil {
		t.Fatal(err)
	}
	lock.Close()
	if err := snap.Wait(); err != nil {
		t.Fatalf("snapshot after a clear: %v: %s", err, errb.String())
	}
	if doc := jsonOf[map[string]any](t, out.String()); doc["created"] != true {
		t.Fatalf("snapshot after a clear: %s", out.String())
	}
	if n := len(jsonOf[[]any](t, b.ok("list", dir, "--json").out)); n != 1 {
		t.Fatalf("after clear and a snapshot the store lists %d snapshots, want 1", n)
	}
	b.ok("verify")
}

// holdsFile reports whether process pid has the file at path open.
func holdsFile(pid int, path string) bool {
	fdDir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	fds, _ := os.ReadDir(fdDir)
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && target == path {
			return true
		}
	}
	return false
}

// TestClearBesideSnapshotsAndGC runs snapshots, gc and clear at once on one
// store: every command succeeds, and after each round the store verifies
// clean, so no snapshot ever refers to packs that a clear or a gc removed.
func TestClearBesideSnapshotsAndGC(t *testing.T) {
	b := newBinEnv(t)
	rounds := 8
	if testing.Short() {
		rounds = 3
	}
	casckpt := func(args ...string) error {
		if r := b.run(args...); r.code != 0 {
			return fmt.Errorf("casckpt %v: exit %d: %s", args, r.code, r.err)
		}
		return nil
	}
	dirs := []string{t.TempDir(), t.TempDir()}
	for r := range rounds {
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i, dir := range dirs {
			writeFiles(t, dir, map[string]string{"f.txt": fmt.Sprintf("round %d", r), "big.bin": strings.Repeat(fmt.Sprint(r, i), 300_000)})
			wg.Add(1)
			go func() { defer wg.Done(); errs <- casckpt("snapshot", dir) }()
		}
		for _, args := range [][]string{{"gc"}, {"clear", "--yes"}, {"gc"}} {
			wg.Add(1)
			go func() { defer wg.Done(); errs <- casckpt(args...) }()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", r, err)
			}
		}
		if err := casckpt("verify"); err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
	}
}
