// Package castest provides an in-memory object store for the tests of the
// packages built on cas: a Getter and Putter held in a map, with Delete to
// simulate a damaged store.
//
// Caveats: it is test support; no package outside tests may import it (the
// layering test checks).
package castest
