package osfs

import "os"

// SyncDir makes the creations, renames and removals in the open directory
// f durable: nothing to do on Windows, where NTFS journals a directory's
// changes with the files' metadata, and which refuses FlushFileBuffers on
// a directory handle opened to read it (Access denied).
func SyncDir(*os.File) error { return nil }
