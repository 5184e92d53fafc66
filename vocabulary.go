package casckpt

import (
	"slices"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/internal/scan"
	"github.com/casckpt/casckpt/manifest"
)

// The types of the layers below that a host meets in this package's
// results, named here so that a host imports this package alone.

// ID names a snapshot or a stored object: 32 bytes, written as 64 hex
// digits.
type ID = cas.ID

// Entry is one file, symbolic link or directory of a snapshot's tree.
type Entry = manifest.Entry

// Kind says what an entry is.
type Kind = manifest.Kind

// The kinds of entries.
const (
	KindFile    = manifest.KindFile
	KindSymlink = manifest.KindSymlink
	KindDir     = manifest.KindDir
	// KindUnreadable is a path that was there but could not be read: not
	// captured, and never shown by Ls nor touched by Restore or Undo.
	KindUnreadable = manifest.KindUnreadable
)

// DefaultExcludes returns the patterns a snapshot leaves out by default
// (a pattern ending in '/' matches directories), at any depth, unless a
// .gitignore negation or the project's git index brings a path back.
func DefaultExcludes() []string { return slices.Clone(scan.DefaultExcludes) }

// Change is one path that differs between two trees: its entry before
// (Old) and after (New).
type Change = manifest.Change

// Status says how a path changed.
type Status = manifest.Status

// The ways a path changes.
const (
	Added       = manifest.Added
	Modified    = manifest.Modified
	Deleted     = manifest.Deleted
	TypeChanged = manifest.TypeChanged
)
