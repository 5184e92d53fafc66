package main

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDamagedDatabaseNeverCrashes flips bytes all over the store's
// database and runs list, verify and snapshot on it: each must answer
// (success, or exit 1 with one line) within seconds, never panic or hang.
func TestDamagedDatabaseNeverCrashes(t *testing.T) {
	rounds := 100
	if testing.Short() {
		rounds = 15
	}
	bin := binary(t)
	home := t.TempDir()
	store := filepath.Join(home, "store")
	dir := filepath.Join(home, "project")
	for i := range 30 {
		writeFiles(t, dir, map[string]string{filepath.Join("d", string(rune('a'+i%5)), "f"+string(rune('a'+i))+".txt"): strings.Repeat("line\n", i+1)})
	}
	run := func(args ...string) (int, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c := exec.CommandContext(ctx, bin, append([]string{"--store", store}, args...)...)
		c.Env = []string{"HOME=" + home}
		var errb bytes.Buffer
		c.Stderr = &errb
		err := c.Run()
		if ctx.Err() != nil {
			t.Fatalf("casckpt %v hung on a damaged database", args)
		}
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return code, errb.String()
	}
	if code, errs := run("snapshot", dir); code != 0 {
		t.Fatal(errs)
	}
	db := filepath.Join(store, "casckpt.db")
	orig, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	failed := 0
	for range rounds {
		b := bytes.Clone(orig)
		for range 20 {
			b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
		}
		os.WriteFile(db, b, 0o600)
		for _, args := range [][]string{{"list", dir, "--json"}, {"verify", "--json"}, {"snapshot", dir, "--json"}} {
			code, errs := run(args...)
			if strings.Contains(errs, "goroutine") || code > 1 || (code == 1 && strings.Count(errs, "\n") != 1) {
				t.Fatalf("casckpt %v on a damaged database: exit %d\n%s", args, code, errs)
			}
			if code == 1 {
				failed++
			}
		}
	}
	os.WriteFile(db, orig, 0o600)
	t.Logf("%d rounds, %d commands refused with one line, none crashed", rounds, failed)
}
