package manifest

import (
	"errors"
	"fmt"
	"io/fs"
)

// ErrBadName is wrapped by errors about names a tree cannot hold.
var ErrBadName = errors.New("invalid entry name")

// ErrBadTree is wrapped by errors about malformed tree encodings.
var ErrBadTree = errors.New("malformed tree")

// ErrNotExist is wrapped when a path is not in a tree.
var ErrNotExist = fs.ErrNotExist

// ErrTooLarge is returned by Walk and Diff for a tree of more than
// MaxEntries entries.
var ErrTooLarge = fmt.Errorf("snapshot has more than %d entries", MaxEntries)
