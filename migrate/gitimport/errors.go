package gitimport

import "errors"

// errReadOnly is returned by readOnlyFS for every operation that would
// change the source. go-git's reading code never needs one; should a
// future version try, the read fails instead of the source changing.
var errReadOnly = errors.New("source repository is opened read-only")

// errHashMismatch is wrapped when an object's content does not hash to its
// name: a damaged or hostile store (a loose object can be made to name
// itself, a tree to contain itself).
var errHashMismatch = errors.New("object content does not match its hash")

// errObjectTooLarge: an object is larger than its reader's limit.
var errObjectTooLarge = errors.New("object too large")
