package s3test_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/casckpt/casckpt/internal/s3test"
	"github.com/minio/minio-go/v7"
)

// TestStopRestart: a stopped server refuses connections, and a restarted
// one serves the bucket and objects it had, on the same endpoint.
func TestStopRestart(t *testing.T) {
	srv := s3test.Start(t)
	ctx := context.Background()
	c := srv.Client(t)
	data := []byte("kept across a restart")
	if _, err := c.PutObject(ctx, srv.Bucket, "a/b", bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	if resp, err := http.Get(srv.URL()); err == nil {
		resp.Body.Close()
		t.Fatal("a stopped server answered")
	}
	srv.Stop() // a no-op
	srv.Restart()
	obj, err := c.GetObject(ctx, srv.Bucket, "a/b", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	if got, err := io.ReadAll(obj); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("after the restart: %q %v, want %q", got, err, data)
	}
	if env := srv.Env(); !slices.Contains(env, "AWS_ENDPOINT_URL=http://"+srv.Endpoint) {
		t.Fatalf("Env %q names no AWS_ENDPOINT_URL of the server", env)
	}
}

// TestAdvance: the server's clock moved on by an hour makes an object
// stored before read an hour older, in a HEAD and in a listing, with its
// ETag and bytes unchanged, while one written after reads as written now:
// an hour and more newer.
func TestAdvance(t *testing.T) {
	srv := s3test.Start(t)
	ctx := context.Background()
	c := srv.Client(t)
	data := []byte("an object that ages")
	if _, err := c.PutObject(ctx, srv.Bucket, "dir/old", bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	before, err := c.StatObject(ctx, srv.Bucket, "dir/old", minio.StatObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv.Advance(time.Hour)
	after, err := c.StatObject(ctx, srv.Bucket, "dir/old", minio.StatObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := before.LastModified.Add(-time.Hour); !after.LastModified.Equal(want) || after.ETag != before.ETag {
		t.Fatalf("after an hour: Last-Modified %v, ETag %q; want %v and %q", after.LastModified, after.ETag, want, before.ETag)
	}
	if _, err := c.PutObject(ctx, srv.Bucket, "dir/new", bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	listed := map[string]time.Time{}
	for o := range c.ListObjects(ctx, srv.Bucket, minio.ListObjectsOptions{Prefix: "dir/"}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		listed[o.Key] = o.LastModified
	}
	if d := before.LastModified.Sub(listed["dir/old"]); d < time.Hour-time.Second || d > time.Hour+time.Second {
		t.Fatalf("the listing says dir/old was modified %v before its first HEAD, want an hour", d)
	}
	if d := listed["dir/new"].Sub(listed["dir/old"]); d < time.Hour {
		t.Fatalf("dir/new reads %v newer than dir/old, want an hour or more", d)
	}
	obj, err := c.GetObject(ctx, srv.Bucket, "dir/old", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	if got, err := io.ReadAll(obj); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("after an hour: %q %v, want %q", got, err, data)
	}
}
