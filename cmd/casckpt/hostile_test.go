package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
// than 64 MiB, a commit whose pack is shorter than it says, and a list of
// gc of more than 64 MiB are skipped by every command of a machine that
// meets them (list, snapshot, gc, repair), none of which fails; the
// oversized commit is never fetched; verify and status name all five,
// and verify exits 1.
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
	// A list of gc past its limit (internal/remote.MaxPackList, 64 MiB).
	hugeList := fmt.Sprintf("dropped/packs/pending/%020d-0123456789abcdef", time.Now().UnixNano())
	putObject(t, client, srv.Bucket, prefix+hugeList, io.LimitReader(zeros{}, maxCommit+1), maxCommit+1)

	// Another machine, with a cache of its own, meets them all.
	b := &binEnv{t: t, bin: a.bin, home: t.TempDir(), extra: slices.Clone(a.extra)}
	counter := s3Env(t, b, srv)
	b.extra = append(b.extra, a.extra[len(a.extra)-2]) // a's store URL, b's own cache
	want := []string{forged, oversized, truncated, wrongSize, hugeList}
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
	if r.code != 1 || !strings.Contains(r.err, "5 damaged objects") {
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
	// A gc past its grace period passes the list by, deleting nothing by
	// it, and goes on.
	srv.Advance(time.Second) // the server's clock, to the second, passes the list's
	(&binEnv{t: t, bin: b.bin, home: b.home, extra: append(slices.Clone(b.extra), "CASCKPT_GC_GRACE=1ns")}).ok("gc")
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

// noHang is how long a command may run against a silent server before the
// test calls it hung: a failure detector, far above any deadline.
const noHang = 2 * time.Minute

// runBounded runs casckpt with args and stdin, killed past noHang.
func runBounded(b *binEnv, stdin string, args ...string) result {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), noHang)
	defer cancel()
	c := b.commandContext(ctx, args...)
	c.Stdin = strings.NewReader(stdin)
	return b.runCmd(c)
}

// hookEventJSON is a PreToolUse event of a Write of dir/f.txt.
func hookEventJSON(dir string) string {
	return fmt.Sprintf(`{"session_id":"s1","prompt_id":"p1","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":%q}}`, dir, filepath.Join(dir, "f.txt"))
}

// bucketHookLog returns the hook log of b's bucket stores.
func bucketHookLog(t *testing.T, b *binEnv) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(b.home, "cache", "casckpt", "hook.log"))
	if err != nil {
		t.Fatalf("the hook log of a bucket store: %v", err)
	}
	return string(data)
}

// TestS3SilentServer: a server that takes requests and never answers
// fails every command with one line that says so, once CASCKPT_S3_TIMEOUT
// has passed without a word; the hook gives up after its second, exits
// 0, and logs the miss in the hook log of bucket stores.
func TestS3SilentServer(t *testing.T) {
	srv := s3test.Start(t)
	b := newBinEnv(t)
	counter := s3Env(t, b, srv)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": "one\n"})
	b.ok("snapshot", dir)
	counter.silent.Store(true)
	writeFiles(t, dir, map[string]string{"f.txt": "two\n"})
	quick := &binEnv{t: t, bin: b.bin, home: b.home, extra: append(slices.Clone(b.extra), "CASCKPT_S3_TIMEOUT=200ms")}
	for _, args := range [][]string{{"list", dir}, {"snapshot", dir}, {"status"}, {"verify"}, {"gc"}, {"repair"}, {"restore", dir, "@1"}} {
		r := runBounded(quick, "", args...)
		if r.code != 1 || !strings.Contains(r.err, "no answer from") || strings.Count(r.err, "\n") != 1 {
			t.Errorf("casckpt %v on a silent server: exit %d, stderr %q", args, r.code, r.err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(got) != "two\n" {
		t.Fatalf("f.txt is %q after the failed commands", got)
	}
	r := runBounded(b, hookEventJSON(dir), "hook", "claude-code")
	if r.code != 0 || r.out != "" {
		t.Fatalf("hook on a silent server: exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	if log := bucketHookLog(t, b); !strings.Contains(log, "PreToolUse") || !strings.Contains(log, "no answer from") || !strings.Contains(log, "in 1s") {
		t.Fatalf("hook log: %q", log)
	}
}

// TestS3DownServerHook: the hook on a server that is down (a closed port)
// exits 0 and logs the miss.
func TestS3DownServerHook(t *testing.T) {
	b := newBinEnv(t)
	b.extra = []string{"AWS_ENDPOINT_URL=http://" + s3test.Down(t), "AWS_ACCESS_KEY_ID=" + s3test.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + s3test.SecretKey, "AWS_REGION=" + s3test.Region,
		"CASCKPT_HOME=s3://casckpt/p", "XDG_CACHE_HOME=" + filepath.Join(b.home, "cache")}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": "one\n"})
	r := runBounded(b, hookEventJSON(dir), "hook", "claude-code")
	if r.code != 0 || r.out != "" {
		t.Fatalf("hook on a server that is down: exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	if log := bucketHookLog(t, b); !strings.Contains(log, "PreToolUse") || !strings.Contains(log, "s3 store") {
		t.Fatalf("hook log: %q", log)
	}
}

// TestS3CredentialsNeverShown: credentials written into AWS_ENDPOINT_URL
// or the store URL appear in no output of any command, nor in the hook
// log.
func TestS3CredentialsNeverShown(t *testing.T) {
	for _, tc := range []struct{ endpoint, store string }{
		{"http://alice:hunter2@" + s3test.Down(t), "s3://casckpt/p"},
		{"http://alice:hunter2@[::1", "s3://casckpt/p"},
		{"http://" + s3test.Down(t), "s3://alice:hunter2@casckpt/p"},
	} {
		b := newBinEnv(t)
		b.extra = []string{"AWS_ENDPOINT_URL=" + tc.endpoint, "AWS_ACCESS_KEY_ID=k", "AWS_SECRET_ACCESS_KEY=s",
			"CASCKPT_HOME=" + tc.store, "XDG_CACHE_HOME=" + filepath.Join(b.home, "cache")}
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"f.txt": "one\n"})
		for _, args := range [][]string{{"list", dir}, {"snapshot", dir}, {"status", "--json"}, {"verify"}} {
			r := runBounded(b, "", args...)
			if r.code == 0 || strings.Contains(r.out+r.err, "hunter2") || strings.Contains(r.out+r.err, "alice") {
				t.Errorf("casckpt %v with %s and %s: exit %d, output %q %q", args, tc.endpoint, tc.store, r.code, r.out, r.err)
			}
		}
		if r := runBounded(b, hookEventJSON(dir), "hook", "claude-code"); r.code != 0 || strings.Contains(r.out+r.err, "hunter2") {
			t.Errorf("hook: exit %d, output %q %q", r.code, r.out, r.err)
		}
		if log := bucketHookLog(t, b); strings.Contains(log, "hunter2") || strings.Contains(log, "alice") || log == "" {
			t.Errorf("hook log: %q", log)
		}
	}
}
