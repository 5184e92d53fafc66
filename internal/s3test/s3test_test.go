package s3test_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"testing"

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
