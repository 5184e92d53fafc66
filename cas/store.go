package cas

import (
	"bytes"
	"container/list"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync"
)

// Getter reads verified objects.
type Getter interface {
	// Get returns the plain bytes of object id, verified against id. It
	// returns an error wrapping ErrNotFound when the index lacks id and
	// ErrCorrupt when the stored bytes are damaged or missing. It is safe
	// for concurrent use.
	Get(ctx context.Context, id ID) ([]byte, error)
}

// Putter stores objects.
type Putter interface {
	// Put stores data as an object of the given kind unless an object with
	// the same ID is already stored, and returns the ID. It is safe for
	// concurrent use. Stored objects become durable and visible only when
	// the Putter's owner commits them.
	Put(ctx context.Context, kind Kind, data []byte) (ID, error)
}

// PackSuffix ends the name of every pack file.
const PackSuffix = ".pack"

// Location is where the index says an object lives.
type Location struct {
	Pack uint32 // the pack's number in the object index
	PackEntry
}

// PackInfo is a pack's record in the object index.
type PackInfo struct {
	Number uint32
	Name   [16]byte
	Size   int64
	// Inline: the pack's bytes are in the object index (Index.InlinePack),
	// not in the pack store.
	Inline bool
}

// FileName is the pack's name in its pack store ("<32 hex digits>.pack").
func (p PackInfo) FileName() string { return hex.EncodeToString(p.Name[:]) + PackSuffix }

// Store reads objects through an object index from a pack store. It is
// safe for concurrent use; Close closes the pack readers it opened.
type Store struct {
	packs PackStore
	index Index
	mu    sync.Mutex // guards infos, readers and lru
	// infos caches pack records by number; readers the open packs, at most
	// maxOpenPacks of them not in use, least recently used at lru's back.
	infos   map[uint32]PackInfo
	readers map[uint32]*cachedPack
	lru     *list.List
	blocks  blockCache
}

var _ Getter = (*Store)(nil)

// NewStore returns a Store reading the packs in packs through the object
// index idx; a nil idx is an empty index.
func NewStore(packs PackStore, idx Index) *Store {
	return &Store{packs: packs, index: idx, infos: map[uint32]PackInfo{}, readers: map[uint32]*cachedPack{}, lru: list.New()}
}

// Locate returns where the index says object id lives.
func (s *Store) Locate(id ID) (Location, error) {
	if s.index == nil {
		return Location{}, fmt.Errorf("%s: %w", id.Short(), ErrNotFound)
	}
	return s.index.Locate(id)
}

// Has reports whether the index holds object id.
func (s *Store) Has(id ID) (bool, error) {
	_, err := s.Locate(id)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Get returns the verified plain bytes of object id.
func (s *Store) Get(ctx context.Context, id ID) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	loc, err := s.Locate(id)
	if err != nil {
		return nil, err
	}
	return s.getAt(ctx, loc)
}

// getAt is Get of the object at loc.
func (s *Store) getAt(ctx context.Context, loc Location) ([]byte, error) {
	o, err := s.acquire(ctx, loc.Pack)
	if err != nil {
		return nil, err
	}
	defer s.release(o)
	if !loc.InBlock() {
		data, err := readObject(o.r, loc.PackEntry)
		return data, s.readError(err, loc.Pack)
	}
	block, err := s.blocks.get(blockKey{loc.Pack, loc.Offset}, func() ([]byte, error) { return readBlock(o.r, loc.PackEntry) })
	if err != nil {
		return nil, s.readError(err, loc.Pack)
	}
	data, err := memberData(block, loc.PackEntry, s.bases(ctx))
	if err != nil {
		return nil, err
	}
	if loc.IsDelta() {
		return data, nil // decoded into a slice of its own
	}
	return bytes.Clone(data), nil
}

// bases returns the BaseGetter of the deltas Get reads: a base is read as
// any object, and must be no delta itself (chains of one, see delta.go)
// and no larger than a member (as the sweeps choose them), which bounds
// what a damaged index can make a read hold.
func (s *Store) bases(ctx context.Context) BaseGetter {
	return func(id ID) ([]byte, error) {
		loc, err := s.Locate(id)
		if err != nil {
			return nil, err
		}
		if loc.IsDelta() || loc.RawLen > MaxMemberSize {
			return nil, fmt.Errorf("%w: the base %s is a delta itself or larger than a member", ErrCorrupt, id.Short())
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return s.getAt(ctx, loc)
	}
}

// readError is err of a read from pack n: a pack gone from the pack store
// (a reader of SizedOpener learns it at its first read) is ErrCorrupt, as
// when Open finds it missing.
func (s *Store) readError(err error, n uint32) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	s.mu.Lock()
	p := s.infos[n]
	s.mu.Unlock()
	return missingPack(p)
}

// blockCacheBytes bounds the plain bytes of the decoded blocks a Store
// keeps (it keeps the last one whatever its size), so that reading the
// members of a block one after the other decodes it once: a restore reads
// each chunk it writes twice (verified before anything changes, then
// written), in path order, in parallel, and the chunks of a few dozen
// files edited since a snapshot lie in as many blocks of the snapshots
// that first stored them. With room for 4 blocks, W5's restore of 60
// files decoded 91 blocks (33 MB); with 16 MiB, 43 (24 MB).
const blockCacheBytes = 16 << 20

// blockKey names a block: its pack's number and its offset in the pack.
type blockKey struct{ pack, offset uint32 }

// blockCache holds the plain bytes of the blocks read last, up to
// blockCacheBytes of them. It is safe for concurrent use; a block being
// decoded is waited for, not decoded twice.
type blockCache struct {
	mu      sync.Mutex
	entries map[blockKey]*cachedBlock
	order   []blockKey // least recently used first
	size    int        // plain bytes of the decoded blocks in entries
}

type cachedBlock struct {
	ready chan struct{} // closed once plain or err is set
	plain []byte
	err   error
}

// get returns the plain bytes of block key, decoding them with load unless
// they are cached or being decoded. The bytes must not be changed.
func (c *blockCache) get(key blockKey, load func() ([]byte, error)) ([]byte, error) {
	c.mu.Lock()
	if b, ok := c.entries[key]; ok {
		c.touchLocked(key)
		c.mu.Unlock()
		<-b.ready
		return b.plain, b.err
	}
	if c.entries == nil {
		c.entries = map[blockKey]*cachedBlock{}
	}
	b := &cachedBlock{ready: make(chan struct{})}
	c.entries[key] = b
	c.order = append(c.order, key)
	c.mu.Unlock()
	plain, err := load()
	c.mu.Lock()
	b.plain, b.err = plain, err
	if c.entries[key] == b {
		if err != nil { // not kept: a later read tries again
			delete(c.entries, key)
			c.order = slices.DeleteFunc(c.order, func(k blockKey) bool { return k == key })
		} else {
			c.size += len(plain)
			c.evictLocked()
		}
	}
	c.mu.Unlock()
	close(b.ready)
	return plain, err
}

// evictLocked drops the least recently used blocks while the decoded ones
// take more than blockCacheBytes, keeping the most recent.
func (c *blockCache) evictLocked() {
	for c.size > blockCacheBytes && len(c.order) > 1 {
		k := c.order[0]
		c.size -= len(c.entries[k].plain)
		delete(c.entries, k)
		c.order = c.order[1:]
	}
}

// touchLocked makes key the most recently used.
func (c *blockCache) touchLocked(key blockKey) {
	i := slices.Index(c.order, key)
	c.order = append(slices.Delete(c.order, i, i+1), key)
}
