//go:build !casckpt_lean

package main

import "os"

// lean reports whether this is the release's lean casckpt (see
// companion). This build is whole: it runs every command line itself.
const lean = false

// handOff runs nothing elsewhere in a whole build, which runs every
// command line itself; it clears handedOff, which a lean casckpt that ran
// it as its companion set, from what the processes it starts inherit.
func handOff([]string) { os.Unsetenv(handedOff) }
