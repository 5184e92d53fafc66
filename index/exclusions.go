package index

import (
	"encoding/binary"
	"math"
)

// excludes says whether s was taken with exclusions beyond the defaults.
func (s Snapshot) excludes() bool { return len(s.Exclude) > 0 || s.MaxDirFiles > 0 }

// appendExclusions appends s's exclusions, as exclusions reads them.
func appendExclusions(b []byte, s Snapshot) []byte {
	b = binary.AppendUvarint(b, uint64(len(s.Exclude)))
	for _, p := range s.Exclude {
		b = appendString(b, p)
	}
	return binary.AppendUvarint(b, uint64(s.MaxDirFiles))
}

// exclusions reads into s the exclusions appendExclusions wrote, which a
// record of excludingVersion has: at least one.
func (r *reader) exclusions(s *Snapshot) {
	n := r.uvarint()
	if n > uint64(len(r.b)) { // each takes a byte at least
		r.fail("truncated")
		return
	}
	for range n {
		s.Exclude = append(s.Exclude, r.string())
	}
	limit := r.uvarint()
	if limit > math.MaxInt32 {
		r.fail("bad directory file limit")
	}
	s.MaxDirFiles = int(limit)
	if r.err == nil && !s.excludes() {
		r.fail("exclusions record without exclusions") // one encoding per record
	}
}
