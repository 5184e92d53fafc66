// Package gittest helps the tests of gitimport and of its readers: it
// writes git repositories object by object, as zlib-compressed loose
// objects, with no git program, so that they can hold what git would never
// write; and it reads imported snapshots back in a form that compares with
// git's. Only _test.go files import it.
package gittest
