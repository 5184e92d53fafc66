package cas

import "errors"

// ErrBadID is returned by ParseID for text that is not 64 hex digits.
var ErrBadID = errors.New("not a 64-digit hex object id")

// ErrBadPack is wrapped by errors about malformed pack files.
var ErrBadPack = errors.New("malformed pack")

// Sentinel errors of the object store.
var (
	// ErrNotFound: no object with that ID is in the index.
	ErrNotFound = errors.New("object not found")
	// ErrCorrupt: an object's stored bytes do not match its ID or its index
	// entry, or its pack is damaged or missing.
	ErrCorrupt = errors.New("object corrupt")
	// ErrMissingPack: an object's pack, which the index names, is not in
	// the pack store (its errors match ErrCorrupt too). Where several
	// writers share the packs, gc may have deleted it after the index was
	// last brought up to date.
	ErrMissingPack = errors.New("missing")
)
