package bucket_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/s3test/membucket"
	"github.com/casckpt/casckpt/repo"
	"github.com/casckpt/casckpt/repo/bucket"
)

// TestPacksAreDeletedOnlyByGC: the backend says it cannot delete packs at
// once, and its pack store refuses every deletion outside gc's phases (a
// writer's Abort, a sweep), leaving the pack in the bucket.
func TestPacksAreDeletedOnlyByGC(t *testing.T) {
	ctx := context.Background()
	objects := membucket.New(time.Now())
	b, err := bucket.OpenOver(bucket.Config{Location: "s3://membucket/t", CacheDir: t.TempDir()}, objects, func(dir string) (*index.DB, error) {
		return index.Open(filepath.Join(dir, "casckpt.db"), index.Options{Timeout: time.Second}), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if f := b.Features(); f.ImmediateDelete || f.OrphansObservable || !f.Journaled || f.Grace != time.Hour {
		t.Fatalf("features %+v", f)
	}
	w := cas.NewWriter(b.Packs(), nil)
	if _, err := w.Put(ctx, cas.KindChunk, []byte("kept in the bucket")); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var names []string
	if err := objects.List(ctx, func(p cas.StoredPack) error { names = append(names, p.Name); return nil }); err != nil || len(names) != 1 {
		t.Fatalf("packs %v, %v", names, err)
	}
	for _, del := range []func(context.Context, string) error{b.Packs().Remove, b.Packs().SetAside} {
		if err := del(ctx, names[0]); !errors.Is(err, repo.ErrRefused) {
			t.Fatalf("a deletion outside gc: %v", err)
		}
	}
	w.Abort() // as after a failed commit
	if _, err := objects.Stat(ctx, names[0]); err != nil {
		t.Fatalf("the pack after the refused deletions: %v", err)
	}
}
