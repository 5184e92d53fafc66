//go:build !linux

package main

// releasing reports whether this process is one that release started:
// never, where release starts none.
func releasing() bool { return false }

// release closes the files held: only Linux hands them to another
// process (where a file open in one cannot always be renamed over, as on
// Windows, nothing keeps them).
func (k *keptFiles) release() {
	if k != nil {
		k.closeAll()
	}
}
