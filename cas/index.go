package cas

// Index is the object index a Store reads through: which pack holds each
// object. The index package implements it on a database transaction; cas
// never sees how it is stored.
type Index interface {
	// Locate returns where object id is stored, or an error wrapping
	// ErrNotFound when the index lacks it (ErrCorrupt when its entry is
	// malformed). It is safe for concurrent use.
	Locate(id ID) (Location, error)
	// Pack returns the record of pack number n, or an error wrapping
	// ErrCorrupt when the index lacks it. It is safe for concurrent use.
	Pack(n uint32) (PackInfo, error)
	// InlinePack returns the bytes of inline pack n (see PackInfo.Inline),
	// the caller's to keep, or an error wrapping ErrCorrupt when the index
	// lacks them. It is safe for concurrent use.
	InlinePack(n uint32) ([]byte, error)
}

// IndexWriter is the object index inside a write transaction: what a
// Writer's Commit, a Sweep and a repair change. Its methods are called from
// the transaction's goroutine only; nothing is visible to readers before
// the transaction commits.
type IndexWriter interface {
	Index
	// Packs lists every pack record, in number order.
	Packs() ([]PackInfo, error)
	// ForEachObject calls fn for every object location, in ID order; fn
	// must not change the index.
	ForEachObject(fn func(Location) error) error
	// AddPack records a new pack and returns its record, numbered anew.
	AddPack(name [16]byte, size int64) (PackInfo, error)
	// AddInlinePack records a new inline pack, whose bytes, data, the
	// index keeps, and returns its record, numbered anew.
	AddInlinePack(name [16]byte, data []byte) (PackInfo, error)
	// PutObject records where an object lives. An object already indexed
	// keeps its location unless replace is set.
	PutObject(l Location, replace bool) error
	// DeleteObject removes an object's entry; a missing one is no error.
	DeleteObject(id ID) error
	// DeletePack removes pack n's record, and its bytes when it is
	// inline; a missing one is no error.
	DeletePack(n uint32) error
}
