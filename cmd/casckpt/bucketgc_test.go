package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/casckpt/casckpt/internal/s3test"
)

// TestS3FleetWithGC: four casckpt processes with four caches (four
// machines) snapshot projects of overlapping content into one bucket under
// a keep rule while a fifth runs gc and prune in a loop with a short grace
// period. Every snapshot either succeeds or fails with one line; afterwards
// a fifth cache verifies clean and every snapshot the keep rule kept
// restores byte-exact, and gc did delete packs (each DELETE is logged).
// After each gc and prune the server's clock moves past the grace
// period, while no snapshot runs (a snapshot times itself by its own
// clock, which does not move): gc's second phase deletes while the
// machines write.
func TestS3FleetWithGC(t *testing.T) {
	srv := s3test.Start(t)
	envs := make([]*binEnv, 5)
	counters := make([]*requestCounter, 5)
	for i := range envs {
		envs[i] = newBinEnv(t)
		counters[i] = s3Env(t, envs[i], srv)
	}
	home := envs[0].extra[len(envs[0].extra)-2] // CASCKPT_HOME: one store URL
	for _, e := range envs {
		e.extra = append(e.extra, home, "CASCKPT_GC_GRACE=2s")
	}
	type snap struct {
		id    string
		files map[string]string
	}
	dirs := make([]string, 4)
	taken := make([][]snap, 4)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	var clock sync.RWMutex // held shared by each snapshot, exclusively to advance the server's clock
	for m := range 4 {
		dirs[m] = t.TempDir()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 6 {
				files := map[string]string{}
				for i := range 4 {
					files[fmt.Sprintf("common%d.txt", i)] = strings.Repeat(fmt.Sprintf("common %d v%d\n", i, round/2), 2000)
					files[fmt.Sprintf("own%d.txt", i)] = strings.Repeat(fmt.Sprintf("machine %d file %d round %d\n", m, i, round), 1500)
				}
				writeFiles(t, dirs[m], files)
				clock.RLock()
				r := envs[m].run("snapshot", dirs[m], "--keep", "2", "--json")
				clock.RUnlock()
				mu.Lock()
				switch msg := strings.TrimSpace(r.err); {
				case r.code == 0:
					taken[m] = append(taken[m], snap{jsonOf[map[string]any](t, r.out)["id"].(string), files})
				case strings.Contains(msg, "run it again") && !strings.Contains(msg, "\n"):
					failures = append(failures, msg)
				default:
					t.Errorf("machine %d round %d: exit %d, %q", m, round, r.code, msg)
				}
				mu.Unlock()
			}
		}()
	}
	stop := make(chan struct{})
	gcDone := make(chan struct{})
	go func() {
		defer close(gcDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, cmd := range []string{"gc", "prune"} {
				if r := envs[4].run(cmd); r.code != 0 {
					t.Errorf("%s in the loop: exit %d, %q", cmd, r.code, r.err)
					return
				}
			}
			clock.Lock()
			srv.Advance(3 * time.Second)
			clock.Unlock()
		}
	}()
	wg.Wait()
	close(stop)
	<-gcDone
	if t.Failed() {
		t.FailNow()
	}
	counters[4].mu.Lock()
	during := len(counters[4].deletes)
	counters[4].mu.Unlock()
	for range 2 { // the last list, then past the grace its deletions
		srv.Advance(3 * time.Second)
		envs[4].ok("gc")
	}
	counters[4].mu.Lock()
	deletes := len(counters[4].deletes)
	counters[4].mu.Unlock()
	t.Logf("%d snapshots failed cleanly; gc deleted %d packs, %d of them while the machines wrote", len(failures), deletes, during)
	if deletes == 0 {
		t.Fatal("gc deleted no pack")
	}
	fresh := &binEnv{t: t, bin: envs[0].bin, home: t.TempDir(), extra: slices.Clone(envs[0].extra)}
	fresh.extra = append(fresh.extra, "XDG_CACHE_HOME="+filepath.Join(fresh.home, "cache"))
	if v := jsonOf[map[string]any](t, fresh.ok("verify", "--json").out); len(v["damaged"].([]any)) != 0 {
		t.Fatalf("verify on a fresh cache: %v", v)
	}
	for m, snaps := range taken {
		for _, s := range snaps[max(len(snaps)-2, 0):] { // what --keep 2 kept
			fresh.ok("restore", dirs[m], s.id)
			for name, want := range s.files {
				if got, err := os.ReadFile(filepath.Join(dirs[m], name)); err != nil || string(got) != want {
					t.Fatalf("machine %d snapshot %s: %s differs after a restore (%v)", m, s.id[:12], name, err)
				}
			}
		}
	}
}
