//go:build !casckpt_lean

package main

// lean reports whether this is the release's lean casckpt (see
// companion). This build is whole: it runs every command line itself.
const lean = false

// handOff does nothing in a whole build: it runs every command line
// itself.
func handOff([]string) {}
