package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/casckpt/casckpt/internal/testtree"
)

// TestKillDuringCompaction: a gc that frees a third of the database's
// pages copies the database without them and renames the copy into
// place. Killed at any moment of it (kills calibrated from a timed run of
// the same gc, spread over 1.25 times its length), it leaves a database
// that opens whole, lists every kept snapshot, and exports each exactly,
// and the next gc completes.
func TestKillDuringCompaction(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a store whose database is over 256 KiB")
	}
	b := newBinEnv(t)
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 3000 {
		files[fmt.Sprintf("d%02d/f%04d.txt", i%30, i)] = fmt.Sprintf("file %d\n", i)
	}
	var ids []string
	for round := range 4 {
		for name := range files {
			files[name] = fmt.Sprintf("%s round %d\n", name, round)
		}
		writeFiles(t, dir, files)
		doc := jsonOf[map[string]any](t, b.ok("snapshot", dir, "--max-size-mb", "0", "--json").out)
		ids = append(ids, doc["id"].(string))
	}
	want := map[string]testtree.Tree{}
	for _, id := range ids[2:] {
		want[id] = testtree.ReadTar(t, strings.NewReader(b.ok("export", dir, id, "-o", "-").out))
	}
	b.ok("forget", dir, ids[0], ids[1]) // half the objects die: their records free pages
	prepared := b.store() + ".prepared"
	if err := os.Rename(b.store(), prepared); err != nil {
		t.Fatal(err)
	}
	fresh := func() {
		t.Helper()
		os.RemoveAll(b.store())
		if out, err := exec.Command("cp", "-a", prepared, b.store()).CombinedOutput(); err != nil {
			t.Fatalf("copy the store: %v %s", err, out)
		}
	}
	fresh()
	before := fileSize(t, filepath.Join(b.store(), "casckpt.db"))
	start := time.Now()
	b.ok("gc")
	whole := time.Since(start)
	if after := fileSize(t, filepath.Join(b.store(), "casckpt.db")); after >= before {
		t.Fatalf("gc left the database at %d bytes from %d: the test needs one it compacts", after, before)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range 12 {
		fresh()
		c := b.command("gc")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(whole) * 5 / 4)))
		c.Process.Kill()
		c.Wait()
		b.ok("verify")
		list := b.ok("list", dir, "--json").out
		for id, tree := range want {
			if !strings.Contains(list, id) {
				t.Fatalf("kill %d: snapshot %s is no longer listed", i, id)
			}
			got := testtree.ReadTar(t, strings.NewReader(b.ok("export", dir, id, "-o", "-").out))
			if diff := testtree.Equal(tree, got); diff != "" {
				t.Fatalf("kill %d: snapshot %s exports differently: %s", i, id, diff)
			}
		}
		b.ok("gc")
		if leftovers, _ := filepath.Glob(filepath.Join(b.store(), "casckpt.db.tmp-*")); len(leftovers) > 0 {
			t.Fatalf("kill %d: a gc after it left %v", i, leftovers)
		}
	}
}
