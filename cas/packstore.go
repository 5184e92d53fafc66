package cas

import (
	"context"
	"io"
)

// PackStore is where pack bytes live: a local directory (package
// cas/packstore) or, later, a bucket of an object store. It knows packs only
// as immutable byte strings under a name; what is inside them, and which
// packs the index names, is this package's business.
//
// Names are pack names as PackInfo.FileName returns them and PackName
// parses ("<32 hex digits>.pack"); every method refuses another name with
// an error. Every method is safe for concurrent use by many goroutines.
// Errors about a pack that is not stored match fs.ErrNotExist (errors.Is);
// a method called with a context already done fails with its error.
//
// A pack is written once and never changed: Create, write, Close. Removing
// a pack and creating it again under the same name is allowed, but cas
// never does it (its names are 128 random bits).
type PackStore interface {
	// Create starts a new pack under name. Its bytes become visible (to
	// this store's Open, Stat, List) only when the writer's Close returns
	// nil, and then all at once; until then nothing is stored under name.
	// Create, the writer's Close, or the Sync after it (see PackWriter.Close)
	// fails with an error matching fs.ErrExist when a pack of that name is
	// stored or being created. The caller must end the writer with Close
	// or Abort.
	Create(ctx context.Context, name string) (PackWriter, error)
	// Sync makes durable every pack whose writer's Close returned nil, and
	// every Remove and SetAside that returned nil, before Sync was called:
	// once it returns nil they survive a crash of the machine. Until then a
	// crash may undo them (a closed pack may vanish, a removed one come
	// back). A store that completes packs in the background waits for them
	// here, and returns the first failure of one that no Close or Sync has
	// returned yet (such a pack is not stored). A store whose Close is
	// durable by itself makes Sync a no-op.
	Sync(ctx context.Context) error
	// Open opens pack name for reading ranges. The caller closes the
	// reader; it may keep it open for as long as it likes (cas.Store caches
	// readers) and use it from many goroutines at once. Reads through it
	// are not bound to ctx.
	Open(ctx context.Context, name string) (PackReader, error)
	// Stat returns the name and size of pack name.
	Stat(ctx context.Context, name string) (StoredPack, error)
	// List calls fn, on the caller's goroutine, with every pack stored, in
	// no particular order. Packs being written and packs set aside are not
	// listed; a pack created or removed while List runs may be listed or
	// not. An error from fn stops the listing and is returned.
	List(ctx context.Context, fn func(StoredPack) error) error
	// Remove deletes pack name. Open readers of it may go on reading or
	// fail; a later Open fails.
	Remove(ctx context.Context, name string) error
	// SetAside moves a damaged pack out of the way and keeps its bytes for
	// the user to look at: afterwards the pack is neither listed nor opened
	// under name (the local store renames it to "<name>.damaged").
	SetAside(ctx context.Context, name string) error
	// RemoveIncomplete deletes what writers that never ended left behind
	// (a process killed while writing a pack) and returns the bytes freed.
	// It also deletes the unfinished packs of writers still running, so
	// the caller must make sure no writer is at work: cas calls it only
	// under the store's exclusive lock. A store whose writers leave nothing
	// behind returns 0, nil.
	RemoveIncomplete(ctx context.Context) (int64, error)
}

// SizedOpener is implemented by pack stores that open a pack whose size
// the caller already knows (from the object index) faster than Open,
// which must ask the store for it: a store in a bucket saves a HEAD
// request per pack a process reads. The reader behaves as Open's, except
// that a pack missing from the store fails its reads (fs.ErrNotExist), not
// the opening.
type SizedOpener interface {
	OpenSized(ctx context.Context, name string, size int64) (PackReader, error)
}

// PackSyncer is implemented by pack stores that complete packs in the
// background (cas/s3store's uploads): SyncPacks is Sync for the packs
// names only. It waits for their completion and returns the first failure
// among them, never one of another writer's packs, which Sync, shared by
// every writer of the store, may return (a Close of any writer still may,
// once: see PackWriter.Close); a failure it returns is not returned
// again. cas.Writer's Flush uses it when the store has it.
type PackSyncer interface {
	SyncPacks(ctx context.Context, names []string) error
}

// PackWriter is a pack being written: what PackStore.Create returns. It is
// used by one goroutine at a time.
type PackWriter interface {
	// Write appends to the pack. After an error the pack cannot be
	// completed: call Abort.
	io.Writer
	// Close completes the pack: on nil its bytes are visible under its
	// name to this store's methods (durable after the store's Sync). On an
	// error nothing is stored under the name and the writer's resources
	// are released; Abort is then a no-op. A store may complete the pack
	// in the background (cas/s3store uploads a few at once): its methods
	// that read the name wait for it, a failure is returned by the next
	// Sync or SyncPacks naming the pack (or the next Close, of any writer,
	// which then stores nothing), and other processes see the pack only
	// after one of them returned nil.
	Close() error
	// Abort drops the pack: nothing is stored under its name. It is a
	// no-op after Close or a former Abort. Its error says only that the
	// unfinished bytes could not be deleted (RemoveIncomplete deletes
	// them later).
	Abort() error
}

// PackReader reads ranges of a stored pack: what PackStore.Open returns.
// ReadAt follows io.ReaderAt (a read that reaches past the end returns the
// bytes before it and io.EOF) and is safe for concurrent use.
type PackReader interface {
	io.ReaderAt
	// Size is the pack's length in bytes.
	Size() int64
	// Close releases the reader; ReadAt fails afterwards.
	Close() error
}

// StoredPack is a pack as its store lists it.
type StoredPack struct {
	Name string // "<32 hex digits>.pack"
	Size int64  // in bytes
}
