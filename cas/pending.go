package cas

import (
	"bytes"
	"maps"
	"slices"
)

// runLength is how many IDs a pendingSet gathers in its map before it
// sorts them into a run.
const runLength = 1 << 16

// pendingSet is the set of the objects a Writer stored: the newest in a
// map, the others in sorted runs of runLength. An ID takes 32 bytes in a
// run and about twice that in a map: a million files' worth of a first
// snapshot held 70 MB in the map alone.
type pendingSet struct {
	recent map[ID]struct{}
	runs   [][]ID
}

// has reports whether id is in the set.
func (s *pendingSet) has(id ID) bool {
	if _, ok := s.recent[id]; ok {
		return true
	}
	for _, r := range s.runs {
		if _, ok := slices.BinarySearchFunc(r, id, compareIDs); ok {
			return true
		}
	}
	return false
}

// add puts id in the set.
func (s *pendingSet) add(id ID) {
	if s.recent == nil {
		s.recent = map[ID]struct{}{}
	}
	s.recent[id] = struct{}{}
	if len(s.recent) >= runLength {
		s.runs = append(s.runs, slices.SortedFunc(maps.Keys(s.recent), compareIDs))
		s.recent = nil
	}
}

// compareIDs orders IDs by their bytes.
func compareIDs(a, b ID) int { return bytes.Compare(a[:], b[:]) }
