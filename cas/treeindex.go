package cas

// TreeIndex is an Index that locates trees from memory and every other
// object through the index it was read from, and knows the base of every
// delta (Base).
type TreeIndex struct {
	IndexWriter
	trees   map[ID]Location
	bases   map[ID]ID
	objects int
}

// IndexTrees returns an Index over idx that locates idx's trees from
// memory, read in one pass over idx in ID order: for a reader of every
// tree (a mark), which a lookup each would cost more. It answers as idx
// was when it was made, so it suits a reader in a transaction that has
// not changed idx since and does not change it while reading.
func IndexTrees(idx IndexWriter) (*TreeIndex, error) {
	t := &TreeIndex{IndexWriter: idx, trees: map[ID]Location{}, bases: map[ID]ID{}}
	err := idx.ForEachObject(func(l Location) error {
		t.objects++
		if l.Kind == KindTree {
			t.trees[l.ID] = l
		}
		if l.IsDelta() {
			t.bases[l.ID] = l.Base
		}
		return nil
	})
	return t, err
}

// Base returns the base of object id when the index held it as a delta
// when the tree index was made.
func (t *TreeIndex) Base(id ID) (ID, bool) {
	b, ok := t.bases[id]
	return b, ok
}

// Locate returns where the index located id when the tree index was made
// (a tree), or where it locates it now.
func (t *TreeIndex) Locate(id ID) (Location, error) {
	if l, ok := t.trees[id]; ok {
		return l, nil
	}
	return t.IndexWriter.Locate(id)
}

// Objects and Trees are how many objects, and how many trees, the index
// held when the tree index was made.
func (t *TreeIndex) Objects() int { return t.objects }

// Trees: see Objects.
func (t *TreeIndex) Trees() int { return len(t.trees) }
