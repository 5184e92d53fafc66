//go:build casckpt_nobucket

package main

import "os"

// handOff runs the command line args in the companion when it may name an
// s3:// store (see namesBucket), and then does not return. It returns when
// the command line names none, or the companion is missing or does not
// start: the command then refuses the store when it opens it (see
// noCompanion).
func handOff(args []string) {
	if !namesBucket(args, os.Getenv) {
		return
	}
	path, err := companionPath()
	if err != nil {
		return
	}
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return
	}
	runCompanion(path, args)
}
