//go:build unix

package main

import (
	"crypto/rand"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/casckpt/casckpt/internal/s3test"
)

// TestS3PausedWriterPastGrace: a snapshot process stopped with SIGSTOP
// while it works, for longer than the gc grace period, during which
// another machine runs both phases of gc and deletes the packs of a
// forgotten snapshot the paused one holds the same files as; resumed, it
// either commits or fails with one line, and a new machine finds every
// snapshot whole (no commit names a deleted pack) and reads the files.
//
// The test moves the server's clock on past gc's grace period instead of
// waiting (s3test.Server.Advance). The writer times its snapshot by its
// own clock, which no test can move in another process: its grace period
// is writerGrace, which the pause outlasts, as it outlasts gc's.
func TestS3PausedWriterPastGrace(t *testing.T) {
	const grace, writerGrace = 2 * time.Second, time.Millisecond
	srv := s3test.Start(t)
	w, g := newBinEnv(t), newBinEnv(t)
	s3Env(t, w, srv)
	s3Env(t, g, srv)
	g.extra = append(g.extra, w.extra[len(w.extra)-2]) // the same store URL; g's own cache
	w.extra = append(w.extra, fmt.Sprintf("CASCKPT_GC_GRACE=%v", writerGrace))
	g.extra = append(g.extra, fmt.Sprintf("CASCKPT_GC_GRACE=%v", grace))
	outcomes := map[string]int{}
	for delay := 10 * time.Millisecond; delay <= 320*time.Millisecond; delay *= 2 {
		files := map[string]string{}
		for j := range 12 {
			buf := make([]byte, 1<<20)
			rand.Read(buf)
			files[fmt.Sprintf("f%d.bin", j)] = string(buf)
		}
		old := t.TempDir()
		writeFiles(t, old, files)
		id := jsonOf[map[string]any](t, w.ok("snapshot", old, "--json").out)["id"].(string)
		w.ok("forget", old, id) // its packs are garbage, which w's cache still holds
		dir := t.TempDir()
		writeFiles(t, dir, files)
		c := w.command("snapshot", dir, "--json")
		var out, errb strings.Builder
		c.Stdout, c.Stderr = &out, &errb
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		c.Process.Signal(syscall.SIGSTOP)
		g.ok("gc") // phase one (or two, of the last round's list)
		srv.Advance(grace + time.Second)
		g.ok("gc") // phase two: deletes what is still unneeded
		c.Process.Signal(syscall.SIGCONT)
		err := c.Wait()
		switch msg := strings.TrimSpace(errb.String()); {
		case err == nil:
			outcomes["committed"]++
			sid := jsonOf[map[string]any](t, out.String())["id"].(string)
			fresh := &binEnv{t: t, bin: w.bin, home: t.TempDir(), extra: slices.Clone(w.extra)}
			fresh.extra = append(fresh.extra, "XDG_CACHE_HOME="+filepath.Join(fresh.home, "cache"))
			if got := fresh.ok("cat", dir, sid, "f3.bin").out; got != files["f3.bin"] {
				t.Fatalf("after a pause of %v: the committed snapshot reads wrong bytes; snapshot said %s", delay, out.String())
			}
		case strings.Contains(msg, "\n") || msg == "":
			t.Fatalf("after a pause of %v: %v, stderr %q", delay, err, msg)
		default:
			outcomes[msg]++
		}
		fresh := &binEnv{t: t, bin: w.bin, home: t.TempDir(), extra: slices.Clone(w.extra)}
		fresh.extra = append(fresh.extra, "XDG_CACHE_HOME="+filepath.Join(fresh.home, "cache"))
		if v := jsonOf[map[string]any](t, fresh.ok("verify", "--json").out); len(v["damaged"].([]any)) != 0 {
			t.Fatalf("after a pause of %v: verify on a fresh cache: %v", delay, v)
		}
	}
	t.Logf("outcomes: %v", outcomes)
}
