package casckpt_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/s3test"
)

// s3Server names srv and its credentials for OpenURL.
func s3Server(srv *s3test.Server) casckpt.S3Server {
	return casckpt.S3Server{Endpoint: srv.URL(), AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, Region: srv.Region}
}

// openStore opens an empty store in a temporary directory with the default
// options; when the test ends, the store must verify clean.
func openStore(t *testing.T) *casckpt.Store {
	t.Helper()
	return openStoreWith(t, casckpt.Options{})
}

// openStoreWith is openStore with options (a clock, a lock timeout).
func openStoreWith(t *testing.T, opts casckpt.Options) *casckpt.Store {
	t.Helper()
	s := openUnverifiedStore(t, opts)
	t.Cleanup(func() { checkVerifies(t, s) })
	return s
}

// openUnverifiedStore opens a store that is not verified when the test
// ends: for tests that damage the store on purpose and leave it damaged.
func openUnverifiedStore(t *testing.T, opts casckpt.Options) *casckpt.Store {
	t.Helper()
	s, err := casckpt.Open(filepath.Join(t.TempDir(), "store"), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkVerifies fails the test unless the store verifies clean.
func checkVerifies(t *testing.T, s *casckpt.Store) {
	t.Helper()
	v, err := s.Verify(context.Background())
	if err != nil || len(v.Damaged) != 0 {
		t.Errorf("the store does not verify when the test ends: damaged %+v, %v", v.Damaged, err)
	}
}

// verifyClean fails the test now unless the store verifies clean, and
// returns what Verify checked.
func verifyClean(t *testing.T, s *casckpt.Store) casckpt.VerifyResult {
	t.Helper()
	v, err := s.Verify(context.Background())
	if err != nil || len(v.Damaged) != 0 {
		t.Fatalf("verify: %+v %v", v.Damaged, err)
	}
	return v
}
