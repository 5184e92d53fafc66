package casckpt_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/remote"
	"github.com/casckpt/casckpt/internal/s3test"
)

// openMachine opens the store at url as machine m, with a cache of its
// own.
func openMachine(t *testing.T, srv *s3test.Server, url, m, read string) *casckpt.Store {
	t.Helper()
	s, err := casckpt.OpenURL(context.Background(), url, casckpt.Options{S3: s3Server(srv), CacheDir: t.TempDir(), Machine: m, ReadMachine: read})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestS3CommitsBeforeMachines: a commit written before machines (v1,
// naming none) is read into every machine's own project, so a store
// upgraded in place keeps its history where it was; a commit of another
// machine is read only with ReadMachine.
func TestS3CommitsBeforeMachines(t *testing.T) {
	srv := s3test.Start(t)
	url := s3URL(srv)
	ctx := context.Background()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), []byte("old"), 0o644)
	old, err := openMachine(t, srv, url, "a", "").Snapshot(ctx, dir, casckpt.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Make a's commit what a casckpt from before machines wrote.
	c := srv.Client(t)
	keys := keysUnder(t, srv, strings.TrimPrefix(url, "s3://"+srv.Bucket+"/")+"/"+remote.CommitsDir)
	if len(keys) != 1 {
		t.Fatalf("commits %v", keys)
	}
	obj, err := c.GetObject(ctx, srv.Bucket, keys[0], minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(obj)
	if err != nil {
		t.Fatal(err)
	}
	commit, err := remote.DecodeCommit(b)
	if err != nil || commit.Machine != "a" {
		t.Fatalf("a's commit: %+v %v", commit, err)
	}
	commit.Machine = ""
	v1 := remote.EncodeCommit(commit)
	if err := c.RemoveObject(ctx, srv.Bucket, keys[0], minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, srv.Bucket, keys[0], bytes.NewReader(v1), int64(len(v1)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}

	os.WriteFile(filepath.Join(dir, "f"), []byte("new"), 0o644)
	fresh, err := openMachine(t, srv, url, "a", "").Snapshot(ctx, dir, casckpt.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b1 := openMachine(t, srv, url, "b", "")
	if list, err := b1.List(ctx, dir, 0); err != nil || len(list) != 1 || list[0].ID != old.ID {
		t.Fatalf("machine b lists %+v, %v; want only the commit from before machines", list, err)
	}
	if list, err := openMachine(t, srv, url, "b", "a").List(ctx, dir, 0); err != nil || len(list) != 1 || list[0].ID != fresh.ID {
		t.Fatalf("machine b lists a's %+v, %v", list, err)
	}
	st, err := b1.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]casckpt.ProjectState{}
	for _, p := range st.Projects {
		got[p.Machine+" "+p.Workdir] = p.State
	}
	if len(got) != 2 || got["b "+dir] != "live" || got["a "+dir] != "unreachable" {
		t.Fatalf("status: %v", got)
	}
}
