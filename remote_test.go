package casckpt_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/remote"
	"github.com/casckpt/casckpt/internal/s3test"
	"github.com/minio/minio-go/v7"
)

// openS3 opens the store at url on srv with a cache of its own (a
// machine); the store must verify clean when the test ends.
func openS3(t *testing.T, srv *s3test.Server, url string) *casckpt.Store {
	t.Helper()
	return openS3In(t, srv, url, t.TempDir())
}

// openS3In is openS3 with its cache in cacheDir.
func openS3In(t *testing.T, srv *s3test.Server, url, cacheDir string) *casckpt.Store {
	t.Helper()
	s, err := casckpt.OpenURL(context.Background(), url, casckpt.Options{S3: s3Server(srv), CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { checkVerifies(t, s) })
	return s
}

func s3URL(srv *s3test.Server) string {
	var id [6]byte
	rand.Read(id[:])
	return "s3://" + srv.Bucket + "/t-" + hex.EncodeToString(id[:])
}

// keysUnder lists the keys of srv's bucket under prefix, behind the
// store's back.
func keysUnder(t *testing.T, srv *s3test.Server, prefix string) []string {
	t.Helper()
	var keys []string
	for obj := range srv.Client(t).ListObjects(context.Background(), srv.Bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			t.Fatal(obj.Err)
		}
		keys = append(keys, obj.Key)
	}
	return keys
}

// TestS3RetentionWritesMarkersOnly: on a bucket, the keep rule and forget
// write dropped markers and delete no commit and no pack; gc's first phase
// deletes nothing; prune drops no orphan; clear refuses.
func TestS3RetentionWritesMarkersOnly(t *testing.T) {
	srv := s3test.Start(t)
	url := s3URL(srv)
	s := openS3(t, srv, url)
	ctx := context.Background()
	dir := t.TempDir()
	var ids []casckpt.ID
	for i := range 3 {
		os.WriteFile(filepath.Join(dir, "f.txt"), []byte(strings.Repeat(fmt.Sprint(i), 5000)), 0o644)
		res, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{Keep: 2, MaxStoreSize: -1})
		if err != nil || !res.Created || res.BytesFreed != 0 {
			t.Fatalf("snapshot %d: %+v %v", i, res, err)
		}
		ids = append(ids, res.ID)
	}
	if _, err := s.Forget(ctx, dir, casckpt.Ref(ids[1].String())); err != nil {
		t.Fatal(err)
	}
	prefix := strings.TrimPrefix(url, "s3://"+srv.Bucket+"/") + "/"
	if n := len(keysUnder(t, srv, prefix+"commits/")); n != 3 {
		t.Fatalf("%d commits in the bucket, want 3: none is deleted", n)
	}
	if n := len(keysUnder(t, srv, prefix+"dropped/")); n != 2 {
		t.Fatalf("%d dropped markers, want 2 (keep and forget)", n)
	}
	packs := len(keysUnder(t, srv, prefix+"packs/"))
	if res, err := s.GC(ctx); err != nil || res.ObjectsDeleted != 0 {
		t.Fatalf("gc's first phase on a bucket: %+v %v", res, err)
	}
	if err := s.Clear(ctx); !errors.Is(err, casckpt.ErrRefused) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("clear on a bucket: %v", err)
	}
	if _, err := s.Prune(ctx, casckpt.PruneOptions{}); err != nil { // drops no orphan: the directories are other machines'
		t.Fatalf("prune on a bucket: %v", err)
	}
	if n := len(keysUnder(t, srv, prefix+"packs/")); n != packs {
		t.Fatalf("packs went from %d to %d", packs, n)
	}
	other := openS3(t, srv, url) // another machine sees what is left
	list, err := other.List(ctx, dir, 0)
	if err != nil || len(list) != 1 || list[0].ID != ids[2] {
		t.Fatalf("another machine lists %+v, %v", list, err)
	}
}

// TestS3ConcurrentWriters: four machines snapshot their own projects into
// one bucket at once; a fifth sees every snapshot, and it verifies.
func TestS3ConcurrentWriters(t *testing.T) {
	srv := s3test.Start(t)
	url := s3URL(srv)
	ctx := context.Background()
	var wg sync.WaitGroup
	dirs := make([]string, 4)
	errs := make([]error, 4)
	for m := range dirs {
		dirs[m] = t.TempDir()
		s := openS3(t, srv, url)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 4 {
				os.WriteFile(filepath.Join(dirs[m], "shared.txt"), []byte("the same in every project"), 0o644)
				os.WriteFile(filepath.Join(dirs[m], "own.txt"), []byte(fmt.Sprint(m, i)), 0o644)
				if _, err := s.Snapshot(ctx, dirs[m], casckpt.SnapshotOptions{}); err != nil {
					errs[m] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	fifth := openS3(t, srv, url)
	for m, dir := range dirs {
		list, err := fifth.List(ctx, dir, 0)
		if errs[m] != nil || err != nil || len(list) != 4 {
			t.Fatalf("machine %d: %v; the fifth lists %d snapshots (%v)", m, errs[m], len(list), err)
		}
		var b strings.Builder
		if err := fifth.Cat(ctx, dir, "@1", "own.txt", &b); err != nil || b.String() != fmt.Sprint(m, 3) {
			t.Fatalf("machine %d's newest own.txt: %q %v", m, b.String(), err)
		}
	}
	verifyClean(t, fifth)
}

// TestS3HostClockDoesNotHideCommits: a machine whose host gives the store
// an old clock (as CASCKPT_NOW does) commits under the wall clock's time,
// so a machine that synced after it still sees its snapshots.
func TestS3HostClockDoesNotHideCommits(t *testing.T) {
	srv := s3test.Start(t)
	url := s3URL(srv)
	ctx := context.Background()
	seen, old := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(seen, "f"), []byte("b"), 0o644)
	os.WriteFile(filepath.Join(old, "f"), []byte("a"), 0o644)
	cache := t.TempDir()
	if _, err := openS3In(t, srv, url, cache).Snapshot(ctx, seen, casckpt.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	s, err := casckpt.OpenURL(ctx, url, casckpt.Options{S3: s3Server(srv), CacheDir: t.TempDir(),
		Now: func() time.Time { return time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Snapshot(ctx, old, casckpt.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	list, err := openS3In(t, srv, url, cache).List(ctx, old, 0) // the first machine's next command
	if err != nil || len(list) != 1 || list[0].ID != res.ID || list[0].Time.Year() != 2020 {
		t.Fatalf("the other machine lists %+v, %v", list, err)
	}
}

// TestS3SyncSkipsForeignObjects: a cache syncs past objects under commits/
// that are not commits (junk, a bad key), and applies a dropped marker put
// by another hand to the caches that had the snapshot and to new ones.
func TestS3SyncSkipsForeignObjects(t *testing.T) {
	srv := s3test.Start(t)
	url := s3URL(srv)
	ctx := context.Background()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644)
	res, err := openS3(t, srv, url).Snapshot(ctx, dir, casckpt.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prefix := strings.TrimPrefix(url, "s3://"+srv.Bucket+"/") + "/"
	put := func(key string, data []byte) {
		t.Helper()
		if _, err := srv.Client(t).PutObject(ctx, srv.Bucket, prefix+key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	put(remote.CommitKey(time.Now(), res.ID), []byte("not a commit"))
	put("commits/garbage", []byte("x"))
	cache := t.TempDir()
	if list, err := openS3In(t, srv, url, cache).List(ctx, dir, 0); err != nil || len(list) != 1 || list[0].ID != res.ID {
		t.Fatalf("a cache past junk lists %+v, %v", list, err)
	}
	put(remote.DroppedKey(time.Now(), res.ID), nil)
	for _, c := range []string{t.TempDir(), cache} { // a new machine, the one that had it
		if list, err := openS3In(t, srv, url, c).List(ctx, dir, 0); err != nil || len(list) != 0 {
			t.Fatalf("after a dropped marker a cache lists %+v, %v", list, err)
		}
	}
}

// TestOpenURLReadsNoEnvironment: OpenURL takes the server and its
// credentials from Options.S3 only; the AWS_* variables of the process are
// the command's to read.
func TestOpenURLReadsNoEnvironment(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL", "http://"+s3test.Down(t))
	t.Setenv("AWS_ACCESS_KEY_ID", "key")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("CASCKPT_GC_GRACE", "not a duration")
	_, err := casckpt.OpenURL(context.Background(), "s3://bucket/p", casckpt.Options{CacheDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID or AWS_SECRET_ACCESS_KEY is not set") {
		t.Fatalf("OpenURL with credentials in the environment only: %v, want the credentials refused as not set", err)
	}
}
