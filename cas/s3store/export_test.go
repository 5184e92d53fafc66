package s3store

import "time"

// SetStaleAge sets how old a multipart upload must be for
// RemoveIncomplete to abort it.
func SetStaleAge(s *Store, d time.Duration) { s.staleAge = d }

// MaxUploads is how many packs a store sends at once.
const MaxUploads = maxUploads
