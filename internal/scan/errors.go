package scan

import "errors"

// ErrTooManyFiles is returned when a tree holds more files than allowed.
var ErrTooManyFiles = errors.New("too many files")

// errSymlinkOnPath: a component of a path the walk saw as a directory or a
// file is now a symlink (ELOOP from a resolution that follows none).
var errSymlinkOnPath = errors.New("its path now goes through a symlink; not followed")

// A file that changed into something a snapshot cannot hold while it
// was read is left out with one of these.
var (
	errNotRegular = errors.New("no longer a regular file")
	errTooBig     = errors.New("larger than the size limit")
)

// errCacheDamaged: the stat cache named a tree that is not stored.
var errCacheDamaged = errors.New("stat cache names a tree the store lacks")
