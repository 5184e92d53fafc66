package casckpt_test

import (
	"context"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/internal/s3test/membucket"
)

// The gc grace period and horizon of the tests on an in-memory bucket:
// the defaults, since the tests advance the server's clock past them
// instead of waiting them out.
const (
	memGrace   = time.Hour
	memHorizon = 7 * 24 * time.Hour
)

// memBucket is an in-memory bucket (its keys relative to the stores'
// prefix) that the stores of a test share, each with a cache of its own:
// a machine.
type memBucket struct {
	*membucket.Bucket
	url string
}

// newMemBucket returns an empty in-memory bucket whose server clock reads
// the time now.
func newMemBucket() *memBucket {
	return &memBucket{Bucket: membucket.New(time.Now()), url: "s3://membucket/t"}
}

// open opens a store over the bucket as a machine of its own, with the
// default grace period and horizon; the store must verify clean when the
// test ends.
func (m *memBucket) open(t *testing.T) *casckpt.Store { return m.openOver(t, m.Bucket) }

// openOver is open with the store's requests through bucket, which
// wraps m's (a test that alters some of them).
func (m *memBucket) openOver(t *testing.T, bucket casckpt.ObjectStore) *casckpt.Store {
	t.Helper()
	s, err := casckpt.OpenBucket(m.url, bucket, casckpt.Options{CacheDir: t.TempDir(), GCGrace: memGrace, GCHorizon: memHorizon})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { checkVerifies(t, s) })
	return s
}

// get returns the object under key, behind the stores' back.
func (m *memBucket) get(t *testing.T, key string) []byte {
	t.Helper()
	b, err := m.Get(context.Background(), key, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// packBytes sums the sizes of the bucket's packs, with their names.
func (m *memBucket) packBytes(t *testing.T) (int64, []string) {
	t.Helper()
	var total int64
	var names []string
	err := m.List(context.Background(), func(p cas.StoredPack) error {
		total += p.Size
		names = append(names, p.Name)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return total, names
}
