package casckpt_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/s3test"
	"github.com/minio/minio-go/v7"
)

// failPackPuts fails every PUT of a pack while on is set, as a server
// that went away would; other requests pass.
type failPackPuts struct {
	base http.RoundTripper
	on   atomic.Bool
}

func (f *failPackPuts) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.on.Load() && r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/packs/") {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, errors.New("connection reset by the test")
	}
	return f.base.RoundTrip(r)
}

// TestS3UploadFailureFailsSnapshot: a first snapshot of several packs
// whose uploads fail fails with one line that says what to do, and puts
// no commit object; once the server takes packs again the next snapshot
// succeeds, and the upload progress adds up to the packs in the bucket.
func TestS3UploadFailureFailsSnapshot(t *testing.T) {
	srv := s3test.Start(t)
	url := s3URL(srv)
	base, err := minio.DefaultTransport(false)
	if err != nil {
		t.Fatal(err)
	}
	f := &failPackPuts{base: base}
	var uploaded atomic.Int64
	server := s3Server(srv)
	server.MaxAttempts = 1 // the test does not wait out minio-go's backoff
	s, err := casckpt.OpenURL(context.Background(), url, casckpt.Options{S3: server, CacheDir: t.TempDir(),
		S3Transport: f, UploadProgress: func(n int64) { uploaded.Add(n) }})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i := range 2 { // incompressible: 2 packs (a pack closes at 8 MiB)
		data := make([]byte, 5<<20)
		rand.Read(data)
		if err := os.WriteFile(filepath.Join(dir, "f"+string(rune('a'+i))), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	f.on.Store(true)
	_, err = s.Snapshot(ctx, dir, casckpt.SnapshotOptions{})
	if err == nil || !strings.Contains(err.Error(), "check AWS_ENDPOINT_URL") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("snapshot whose uploads fail: %v, want a one-line error saying what to do", err)
	}
	t.Log(err)
	prefix := strings.TrimPrefix(url, "s3://"+srv.Bucket+"/") + "/"
	if keys := keysUnder(t, srv, prefix+"commits/"); len(keys) != 0 {
		t.Fatalf("a failed snapshot put commits %v", keys)
	}
	f.on.Store(false)
	uploaded.Store(0)
	res, err := s.Snapshot(ctx, dir, casckpt.SnapshotOptions{})
	if err != nil || !res.Created {
		t.Fatalf("snapshot once the server takes packs: %+v %v", res, err)
	}
	checkVerifies(t, s)
	var packBytes int64
	for obj := range srv.Client(t).ListObjects(ctx, srv.Bucket, minio.ListObjectsOptions{Prefix: prefix + "packs/", Recursive: true}) {
		packBytes += obj.Size
	}
	if got := uploaded.Load(); got != packBytes || got < 10<<20 {
		t.Fatalf("upload progress reported %d bytes, want the %d of the packs in the bucket", got, packBytes)
	}
}
