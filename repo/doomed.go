package repo

import (
	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/index"
)

// A pack is doomed when a gc of a backend without immediate deletion
// listed it for deletion (index.Journal.SetDoomed): a writer stores again
// the objects it holds instead of reusing them. Records with no doomed
// pack (every store in a directory) deduplicate against every object.

// DedupeAgainst is what a snapshot's writer deduplicates against: the
// objects of the records, less those located in doomed packs.
func DedupeAgainst(tx *index.Tx, objects *cas.Store) cas.Existing {
	doomed, err := DoomedNumbers(tx)
	if err != nil || len(doomed) == 0 {
		return objects // an error shows at the commit's own reads
	}
	return undoomed{objects, doomed}
}

// undoomed hides the objects of doomed packs from a writer.
type undoomed struct {
	objects *cas.Store
	doomed  map[uint32]bool // pack numbers
}

// Has reports whether id is stored in a pack no gc is deleting.
func (u undoomed) Has(id cas.ID) (bool, error) {
	has, err := u.objects.Has(id)
	if err != nil || !has {
		return has, err
	}
	l, err := u.objects.Locate(id)
	if err != nil {
		return false, err
	}
	return !u.doomed[l.Pack], nil
}

// Relocates says whether a writer's commit in tx points objects already
// indexed at its own packs: when the records have doomed packs, whose
// objects the writer stored again.
func Relocates(tx *index.Tx) bool { return len(tx.Journal().DoomedPacks()) > 0 }

// DoomedNumbers returns the numbers of the doomed packs of tx.
func DoomedNumbers(tx *index.Tx) (map[uint32]bool, error) {
	doomed := tx.Journal().DoomedPacks()
	packs, err := tx.Objects().Packs()
	out := map[uint32]bool{}
	for _, p := range packs {
		if doomed[p.Name] {
			out[p.Number] = true
		}
	}
	return out, err
}

// PackBytes sums the sizes of the packs of tx that no gc is deleting:
// what the size cap's quick check counts after a commit, so that the
// packs a gc's first phase listed no longer count (a store in a directory
// has no doomed pack: every pack counts).
func PackBytes(tx *index.Tx) (int64, error) {
	doomed := tx.Journal().DoomedPacks()
	packs, err := tx.Objects().Packs()
	var total int64
	for _, p := range packs {
		if !doomed[p.Name] {
			total += p.Size
		}
	}
	return total, err
}
