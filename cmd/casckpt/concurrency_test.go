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
	casckpt := func(args ...string) ([]byte, error) {
		c := bin.command(append([]string{"--store", bin.store()}, args...)...)
		var errb bytes.Buffer
		c.Stderr = &errb
		out, err := c.Output()
		if err != nil {
			return out, fmt.Errorf("casckpt %v: %v: %s", args, err, errb.String())
		}
		return out, nil
	}
	shared := t.TempDir()
	writeFiles(t, shared, map[string]string{"common.txt": "shared"})
	type taken struct {
		dir, id string
		files   map[string]string
	}
	var mu sync.Mutex
	var all []taken
	var wg sync.WaitGroup
	errs := make(chan error, 64)
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
				out, err := casckpt("snapshot", dir, "--json", "--keep", "100")
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
					all = append(all, taken{dir, *doc.ID, files})
					mu.Unlock()
				}
			}
		}()
	}
	stop := make(chan struct{})
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
			for _, args := range [][]string{{"gc"}, {"prune", "--retention-days", "0"}, {"repair"}} {
				if _, err := casckpt(args...); err != nil {
					errs <- err
					return
				}
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
	if out, err := casckpt("verify", "--json"); err != nil {
		t.Fatalf("verify after the run: %v %s", err, out)
	}
	for _, tk := range all {
		if _, err := casckpt("restore", tk.dir, tk.id); err != nil {
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
