//go:build casckpt_lean

package casckpt

import (
	"context"
	"fmt"
)

// BucketsBuiltIn reports whether this build opens s3:// stores itself. This
// one, built with the tag casckpt_lean (the release's lean casckpt), does not: it links neither
// repo/bucket nor the S3 client under it, whose package initialisation
// (regular expressions, tables, machine IDs) took 1.2 ms of every
// process (casckpt --version 5.65 against 4.41 ms, a W3 turn 15.9
// against 14.9 ms); the command hands a command line on an s3:// store to
// the whole build (casckpt-full, see cmd/casckpt).
const BucketsBuiltIn = false

// openBucketURL refuses: this build has no S3 client (see BucketsBuiltIn).
func openBucketURL(_ context.Context, location string, _ Options) (*Store, error) {
	return nil, fmt.Errorf("%w: %s: this casckpt was built without s3:// stores (build tag casckpt_lean); use a build without the tag", ErrRefused, location)
}
