// Package testtree writes fixture directory trees described as data and
// reads trees back in the same form, so tests can compare them exactly;
// ReadDigest records a tree without holding its bytes, for comparing large
// trees or checking that nothing under a directory changed.
//
// Caveats: it is test support; no package outside tests may import it (the
// layering test checks).
package testtree
