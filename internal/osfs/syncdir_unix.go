//go:build unix

package osfs

import "os"

// SyncDir makes the creations, renames and removals in the open directory
// f durable (fsync).
func SyncDir(f *os.File) error { return f.Sync() }
