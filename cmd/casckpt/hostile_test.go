package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/casckpt/casckpt/internal/s3test"
)

// The hostile-bucket suite: objects that a broken or hostile writer, or
// a damaged disk, leaves in a bucket store, and servers that do not
// answer. Every command goes on past a damaged object, and verify and
// status name it; no request waits without end; no credential is shown.

// maxCommit is internal/remote.MaxCommit: a commit past it is refused
// before it is read.
const maxCommit = 64 << 20

// bucketPrefix returns the prefix of b's bucket store, with a slash.
func bucketPrefix(t *testing.T, b *binEnv) string {
	t.Helper()
	for _, kv := range b.extra {
		if v, ok := strings.CutPrefix(kv, "CASCKPT_HOME=s3://"); ok {
			_, prefix, _ := strings.Cut(v, "/")
			return prefix + "/"
		}
	}
	t.Fatal("no s3:// CASCKPT_HOME")
	return ""
}

// commitKey returns a new commit key of the time now (relative to the
// prefix), as a writer names one.
func commitKey() string {
	var id [32]byte
	rand.Read(id[:])
	return fmt.Sprintf("commits/%020d-%s", time.Now().UnixNano(), hex.EncodeToString(id[:]))
}

// bucketKeys lists the keys under prefix+dir.
func bucketKeys(t *testing.T, c *minio.Client, bucket, dir string) []string {
	t.Helper()
	var keys []string
	for o := range c.ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Prefix: dir, Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		keys = append(keys, o.Key)
	}
	return keys
}

// putObject puts size bytes of r under key, over whatever is there.
func putObject(t *testing.T, c *minio.Client, bucket, key string, r io.Reader, size int64) {
	t.Helper()
	if _, err := c.PutObject(context.Background(), bucket, key, r, size, minio.PutObjectOptions{DisableMultipart: true}); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

// getObject returns the object under key.
func getObject(t *testing.T, c *minio.Client, bucket, key string) []byte {
	t.Helper()
	o, err := c.GetObject(context.Background(), bucket, key, minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	b, err := io.ReadAll(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestS3HostileObjects: a forged commit, a truncated one, one of more
// than 64 MiB, and a commit whose pack is shorter than it says are
// skipped by every command of a machine that meets them (list, snapshot,
// gc, repair), none of which fails; the oversized one is never read;
// verify and status name all four, and verify exits 1.
func TestS3HostileObjects(t *testing.T) {
	srv := s3test.Start(t)
	a := newBinEnv(t)
	s3Env(t, a, srv)
	prefix := bucketPrefix(t, a)
	client := srv.Client(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": "one\n"})
	v1 := jsonOf[map[string]any](t, a.ok("snapshot", dir, "--json").out)["id"].(string)
	commits := bucketKeys(t, client, srv.Bucket, prefix+"commits/")
	packs := bucketKeys(t, client, srv.Bucket, prefix+"packs/")
	big := make([]byte, 256<<10)
	rand.Read(big)
	writeFiles(t, dir, map[string]string{"f.txt": "two\n", "big.bin": string(big)})
	a.ok("snapshot", dir)

	// The commit and pack of the second snapshot: its pack cut in half.
	var wrongSize, shortPack string
	for _, k := range bucketKeys(t, client, srv.Bucket, prefix+"commits/") {
		if !slices.Contains(commits, k) {
			wrongSize = strings.TrimPrefix(k, prefix)
		}
	}
	for _, k := range bucketKeys(t, client, srv.Bucket, prefix+"packs/") {
		if !slices.Contains(packs, k) {
			shortPack = k
		}
	}
	if wrongSize == "" || shortPack == "" {
		t.Fatal("the second snapshot made no commit or no pack")
	}
	pack := getObject(t, client, srv.Bucket, shortPack)
	putObject(t, client, srv.Bucket, shortPack, bytes.NewReader(pack[:len(pack)/2]), int64(len(pack)/2))

	// A forged commit, a truncated one, an oversized one.
	forged, truncated, oversized := commitKey(), commitKey(), commitKey()
	junk := make([]byte, 300)
	rand.Read(junk)
	putObject(t, client, srv.Bucket, prefix+forged, bytes.NewReader(junk), int64(len(junk)))
	real := getObject(t, client, srv.Bucket, commits[0])
	putObject(t, client, srv.Bucket, prefix+truncated, bytes.NewReader(real[:len(real)-7]), int64(len(real)-7))
	putObject(t, client, srv.Bucket, prefix+oversized, io.LimitReader(zeros{}, maxCommit+1), maxCommit+1)

	// Another machine, with a cache of its own, meets them all.
	b := &binEnv{t: t, bin: a.bin, home: t.TempDir(), extra: slices.Clone(a.extra)}
	counter := s3Env(t, b, srv)
	b.extra = append(b.extra, a.extra[len(a.extra)-2]) // a's store URL, b's own cache
	want := []string{forged, oversized, truncated, wrongSize}
	slices.Sort(want)
	damagedKeys := func(doc map[string]any) []string {
		var keys []string
		for _, o := range doc["damaged_objects"].([]any) {
			keys = append(keys, o.(map[string]any)["key"].(string))
		}
		return keys
	}
	list := jsonOf[[]map[string]any](t, b.ok("list", dir, "--json").out)
	if len(list) != 1 || list[0]["id"] != v1 {
		t.Fatalf("list on a new machine: %v, want %s alone", list, v1)
	}
	writeFiles(t, dir, map[string]string{"f.txt": "three\n"})
	b.ok("snapshot", dir)
	if got := damagedKeys(jsonOf[map[string]any](t, b.ok("status", "--json").out)); !slices.Equal(got, want) {
		t.Fatalf("status names %v as damaged, want %v", got, want)
	}
	r := b.run("verify", "--json")
	if r.code != 1 || !strings.Contains(r.err, "4 damaged objects") {
		t.Fatalf("verify: exit %d, stderr %q", r.code, r.err)
	}
	if got := damagedKeys(jsonOf[map[string]any](t, r.out)); !slices.Equal(got, want) {
		t.Fatalf("verify names %v as damaged, want %v", got, want)
	}
	// The writer of the second snapshot knew its pack: it meets only the
	// three new commits, and goes on too.
	a.ok("list", dir)
	a.ok("snapshot", dir)
	if got := damagedKeys(jsonOf[map[string]any](t, a.ok("status", "--json").out)); !slices.Equal(got, slices.DeleteFunc(slices.Clone(want), func(k string) bool { return k == wrongSize })) {
		t.Fatalf("status on the first machine names %v as damaged", got)
	}
	b.ok("gc")
	b.ok("repair")
	if got := damagedKeys(jsonOf[map[string]any](t, b.ok("status", "--json").out)); !slices.Equal(got, want) {
		t.Fatalf("after repair, status names %v as damaged, want %v", got, want)
	}
	if n := counter.getsOf("/" + srv.Bucket + "/" + prefix + oversized); n != 0 {
		t.Fatalf("the oversized commit was fetched %d times", n)
	}
}

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
