package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/casckpt/casckpt/internal/s3test"
)

// TestS3CacheCorruptedIsRebuilt: a cache database damaged on disk (its
// pages overwritten, or cut short) is only a cache: the next command on the
// s3 store sets it aside, rebuilds it from the bucket and answers as
// before; nothing in the bucket is lost.
func TestS3CacheCorruptedIsRebuilt(t *testing.T) {
	for _, damage := range []string{"overwritten", "truncated"} {
		t.Run(damage, func(t *testing.T) {
			b := newBinEnv(t)
			s3Env(t, b, s3test.Start(t))
			dir := t.TempDir()
			for _, text := range []string{"one\n", "two\n"} {
				writeFiles(t, dir, map[string]string{"f.txt": text, "big.bin": strings.Repeat(text, 1000)})
				b.ok("snapshot", dir, "-m", "step "+text)
			}
			list, turns := storeView(t, b, dir)
			dbs, _ := filepath.Glob(filepath.Join(b.home, "cache", "casckpt", "*", "casckpt.db"))
			if len(dbs) != 1 {
				t.Fatalf("cache databases: %v", dbs)
			}
			damageFile(t, dbs[0], damage)
			gotList, gotTurns := storeView(t, b, dir)
			if gotList != list || gotTurns != turns {
				t.Fatalf("after the cache was %s, list\n%s\nturns\n%s\nwant\n%s\n%s", damage, gotList, gotTurns, list, turns)
			}
			b.ok("restore", dir, "@2")
			if got, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(got) != "one\n" {
				t.Fatalf("restore @2 after the cache was %s: f.txt is %q", damage, got)
			}
		})
	}
}

// damageFile overwrites the middle of the file at path with junk, or cuts
// it to a third.
func damageFile(t *testing.T, path, how string) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if how == "truncated" {
		if err := os.Truncate(path, st.Size()/3); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	junk := []byte(strings.Repeat("\xde\xad\xbe\xef", int(st.Size()/8)))
	if _, err := f.WriteAt(junk, 0); err != nil {
		t.Fatal(err)
	}
}

// TestS3CacheDeletedMidSnapshot: the cache directory deleted while a
// snapshot is at work (after it opened its database) costs nothing: the
// snapshot either reports success, and then every later command sees it
// from a new cache, or fails with a message; the bucket verifies clean
// and the next snapshot works.
func TestS3CacheDeletedMidSnapshot(t *testing.T) {
	b := newBinEnv(t)
	s3Env(t, b, s3test.Start(t))
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 400 {
		files[fmt.Sprintf("d%02d/f%03d.txt", i%20, i)] = strings.Repeat(fmt.Sprintf("line %d of a file\n", i), 200+i)
	}
	writeFiles(t, dir, files)
	b.ok("snapshot", dir, "-m", "first")
	writeFiles(t, dir, map[string]string{"d00/f000.txt": "changed\n", "new.txt": "new\n"})
	cache := filepath.Join(b.home, "cache", "casckpt")
	c := b.command("snapshot", dir, "-m", "second", "--json")
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := os.RemoveAll(cache); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	var err error
	for waiting := true; waiting; {
		select {
		case err = <-done:
			waiting = false
			t.Log("the snapshot ended before its cache database appeared")
		case <-time.After(time.Millisecond):
			if dbs, _ := filepath.Glob(filepath.Join(cache, "*", "casckpt.db")); len(dbs) > 0 {
				// Moved away in one step (a RemoveAll races with the files
				// the snapshot adds), and then removed.
				gone := cache + ".gone"
				if err := os.Rename(cache, gone); err != nil {
					t.Fatal(err)
				}
				defer os.RemoveAll(gone)
				err = <-done
				waiting = false
			}
		}
	}
	list := b.ok("list", dir, "--json").out
	if err == nil {
		id := jsonOf[map[string]any](t, out.String())["id"].(string)
		if !strings.Contains(list, id) {
			t.Fatalf("the snapshot reported %s, which a new cache does not list:\n%s", id, list)
		}
	} else if errb.Len() == 0 || strings.Count(strings.TrimSpace(errb.String()), "\n") > 0 {
		t.Fatalf("the snapshot failed (%v) without a one-line message: %q", err, errb.String())
	}
	if v := jsonOf[map[string]any](t, b.ok("verify", "--json").out); len(v["damaged"].([]any)) != 0 {
		t.Fatalf("verify: %v", v)
	}
	writeFiles(t, dir, map[string]string{"after.txt": "after\n"})
	b.ok("snapshot", dir, "-m", "third")
	b.ok("restore", dir, "@1")
	if got, _ := os.ReadFile(filepath.Join(dir, "d00", "f000.txt")); string(got) != "changed\n" {
		t.Fatalf("restore @1: d00/f000.txt is %q", got)
	}
}
