package casckpt_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/s3test"
)

// machine opens the store on one machine: each call a store of its own
// (a command) over the machine's cache, which syncs with the bucket at its
// first use, with the options given (a clock). On a directory every
// machine opens the one directory.
type machine func(opts casckpt.Options) *casckpt.Store

// backend is one kind of store that the use-case conformance suite
// (conformance_test.go) runs every case on.
type backend struct {
	name string
	// newMachine returns a new machine of the store, with an empty cache;
	// when the test ends it must verify clean, in a store opened anew.
	newMachine func(t *testing.T) machine
	// pastGrace moves the server's clock past gc's grace period: nothing
	// on a directory (gc deletes at once), the in-memory bucket's clock
	// advanced, versitygw's objects aged (s3test.Server.Advance). Call it
	// only while no snapshot runs: a snapshot times itself by this
	// machine's clock, which does not move.
	pastGrace func()
	// rebuild rebuilds the store's records from nothing and returns a
	// store that reads them: on a directory, the database deleted and
	// Repair run; on a bucket, a new machine (an empty cache) that runs
	// Repair.
	rebuild func(t *testing.T) *casckpt.Store
	// packs lists the store's pack files (paths, or keys in the bucket)
	// and losePack deletes one of them behind the stores' back: a disk's
	// or a bucket's loss.
	packs    func(t *testing.T) []string
	losePack func(t *testing.T, pack string)
	// journaled: the records are kept apart from the database (a bucket's
	// commits, dropped markers and pins), so a rebuild brings back every
	// pin and no dropped snapshot. A directory's database is the truth:
	// rebuilt from the record backups in the packs, its snapshots come
	// back unpinned, and one dropped whose backup gc has not yet deleted
	// comes back (see Store.Repair).
	journaled bool
}

// open opens the store on a new machine.
func (b backend) open(t *testing.T, opts casckpt.Options) *casckpt.Store {
	t.Helper()
	return b.newMachine(t)(opts)
}

// backends returns a directory, an in-memory bucket and a bucket on
// versitygw, each new and empty.
func backends() []backend {
	return []backend{localBackend(), memBackend(newMemBucket()), versitygwBackend()}
}

// localBackend is a store in a directory made at its first open.
func localBackend() backend {
	var dir string
	b := backend{name: "local", pastGrace: func() {}}
	b.newMachine = func(t *testing.T) machine {
		if dir == "" {
			dir = t.TempDir()
		}
		return func(opts casckpt.Options) *casckpt.Store {
			t.Helper()
			s, err := casckpt.Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { checkVerifies(t, s) })
			return s
		}
	}
	b.packs = func(t *testing.T) []string {
		if dir != "" { // the inline packs (in the database) to a pack file first
			casckpt.FoldNow(t, b.open(t, casckpt.Options{}))
		}
		names, _ := filepath.Glob(filepath.Join(dir, "packs", "*.pack"))
		return names
	}
	b.losePack = func(t *testing.T, pack string) {
		if err := os.Remove(pack); err != nil {
			t.Fatal(err)
		}
	}
	b.rebuild = func(t *testing.T) *casckpt.Store {
		t.Helper()
		s := b.open(t, casckpt.Options{})
		casckpt.FoldNow(t, s) // a rebuild from the pack files cannot see inline packs
		if err := os.Remove(filepath.Join(s.Location(), "casckpt.db")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Repair(context.Background()); err != nil {
			t.Fatalf("repair of a lost database: %v", err)
		}
		return s
	}
	return b
}

// memBackend is the backend of stores over in-memory bucket m, with the
// default grace period and horizon.
func memBackend(m *memBucket) backend {
	b := bucketBackend("membucket", func() { m.Advance(memGrace + time.Second) },
		func(_ *testing.T, opts casckpt.Options) (*casckpt.Store, error) {
			opts.GCGrace, opts.GCHorizon = memGrace, memHorizon
			return casckpt.OpenBucket(m.url, m.Bucket, opts)
		})
	b.packs = func(*testing.T) []string { return m.Keys("packs/") }
	b.losePack = func(t *testing.T, key string) {
		if err := m.RemovePack(context.Background(), strings.TrimPrefix(key, "packs/")); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// versitygwBackend is a store in a bucket of a versitygw started at its
// first open, with the default grace period and horizon.
func versitygwBackend() backend {
	var srv *s3test.Server
	var url string
	b := bucketBackend("versitygw", func() { srv.Advance(memGrace + time.Second) },
		func(t *testing.T, opts casckpt.Options) (*casckpt.Store, error) {
			if srv == nil {
				srv = s3test.Start(t)
				url = s3URL(srv)
			}
			opts.S3, opts.GCGrace, opts.GCHorizon = s3Server(srv), memGrace, memHorizon
			return casckpt.OpenURL(context.Background(), url, opts)
		})
	b.packs = func(t *testing.T) []string {
		return keysUnder(t, srv, strings.TrimPrefix(url, "s3://"+srv.Bucket+"/")+"/packs/")
	}
	b.losePack = func(t *testing.T, key string) {
		if err := srv.Client(t).RemoveObject(context.Background(), srv.Bucket, key, minio.RemoveObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// bucketBackend is the backend of stores in a bucket that openCache
// opens with opts (CacheDir set to the machine's cache) in a test, and
// whose clock pastGrace moves past the grace period.
func bucketBackend(name string, pastGrace func(), openCache func(*testing.T, casckpt.Options) (*casckpt.Store, error)) backend {
	b := backend{name: name, pastGrace: pastGrace, journaled: true}
	b.newMachine = func(t *testing.T) machine {
		cache := t.TempDir()
		var m machine
		var once sync.Once
		m = func(opts casckpt.Options) *casckpt.Store {
			t.Helper()
			opts.CacheDir = cache
			s, err := openCache(t, opts)
			if err != nil {
				t.Fatal(err)
			}
			// After the server's start: the server stops after the check.
			once.Do(func() { t.Cleanup(func() { checkVerifies(t, m(casckpt.Options{})) }) })
			return s
		}
		return m
	}
	b.rebuild = func(t *testing.T) *casckpt.Store {
		t.Helper()
		s := b.open(t, casckpt.Options{})
		if _, err := s.Repair(context.Background()); err != nil {
			t.Fatalf("repair of an empty cache: %v", err)
		}
		return s
	}
	return b
}
