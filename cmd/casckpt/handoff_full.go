//go:build !casckpt_nobucket

package main

// handOff does nothing in a build with s3:// stores: it runs every
// command line itself.
func handOff([]string) {}
