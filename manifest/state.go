package manifest

import (
	"github.com/zeebo/blake3"

	"github.com/casckpt/casckpt/cas"
)

// stateContext is the BLAKE3 derive-key context of state IDs. It is part of
// the store format (write ledgers hold state IDs): changing it changes
// every state ID.
const stateContext = "casckpt 2026-11 path state v1"

// StateID identifies the state a path is in when it holds e: its kind, and
// for a file its executable bit and bytes (by their chunk IDs, as
// PutContent cuts them), for a link its target. A directory's state is only
// that it is a directory: what it holds are the states of the paths below
// it. Two entries have the same state ID exactly when restoring one over
// the other changes nothing at their path (names, sizes and line counts
// follow from the rest). The zero Entry, which stands for no entry at all,
// has the zero ID: the state of absence.
//
// State IDs live in their own hash domain: one never equals the ID of a
// stored object.
func (e Entry) StateID() cas.ID {
	if e.Kind == 0 {
		return cas.ID{}
	}
	b := []byte{byte(e.Kind)}
	switch e.Kind {
	case KindFile:
		if e.Exec {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		for _, c := range e.Chunks {
			b = append(b, c[:]...)
		}
	case KindSymlink:
		b = append(b, e.Target...)
	}
	var id cas.ID
	blake3.DeriveKey(stateContext, b, id[:])
	return id
}
