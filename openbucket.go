//go:build !casckpt_lean

package casckpt

import (
	"context"

	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/repo/bucket"
)

// BucketsBuiltIn reports whether this build opens s3:// stores itself. A
// build with the tag casckpt_lean leaves out the S3 client and its
// start-up cost (see openbucket_none.go).
const BucketsBuiltIn = true

// openBucketURL opens the store in the bucket at location (see OpenURL).
func openBucketURL(ctx context.Context, location string, opts Options) (*Store, error) {
	var s *Store
	b, err := bucket.Open(ctx, bucketConfig(location, opts), openCache(&s, opts))
	if err != nil {
		return nil, err
	}
	s.attach(b)
	return s, nil
}

// openBucket is OpenURL over objects instead of the server opts.S3 names
// (tests: an in-memory bucket, see export_test.go).
func openBucket(location string, objects bucket.Objects, opts Options) (*Store, error) {
	var s *Store
	b, err := bucket.OpenOver(bucketConfig(location, opts), objects, openCache(&s, opts))
	if err != nil {
		return nil, err
	}
	s.attach(b)
	return s, nil
}

// openCache returns how a bucket backend opens its records: as the store
// in its cache directory, which it keeps in *into.
func openCache(into **Store, opts Options) bucket.OpenDB {
	return func(dir string) (*index.DB, error) {
		s, err := Open(dir, opts)
		if err != nil {
			return nil, err
		}
		*into = s
		return s.repo.DB(), nil
	}
}

// attach makes s, opened in the cache directory of bucket backend b, the
// store in the bucket.
func (s *Store) attach(b *bucket.Backend) {
	s.repo.Attach(b)
}

// bucketConfig is the configuration of the bucket backend of the store at
// location, as opts say.
func bucketConfig(location string, opts Options) bucket.Config {
	o := opts.withDefaults()
	srv := opts.S3
	return bucket.Config{
		Location: location,
		Server: bucket.Server{Endpoint: srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey,
			SessionToken: srv.SessionToken, Region: srv.Region, MaxAttempts: srv.MaxAttempts},
		CacheDir: opts.CacheDir, Transport: opts.S3Transport, Progress: opts.UploadProgress, Timeout: opts.S3Timeout,
		Grace: opts.GCGrace, Horizon: opts.GCHorizon, Machine: opts.Machine, FleetKey: opts.FleetKey,
		Logger: o.Logger, Now: o.Now, SyncEvery: opts.syncEvery,
	}
}
