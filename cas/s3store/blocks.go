package s3store

import (
	"container/list"
	"sync"
)

// Reads of packs go by blocks: a ReadAt fetches, with one ranged GET, the
// aligned blocks that hold its range and are not cached, and the store
// keeps the most recently used blocks up to cacheBudget bytes. A restore
// (which reads every object twice: to check, then to write) or a verify
// then costs about one GET per block of each pack it reads, not one per
// object.
const (
	blockSize   = 1 << 20
	cacheBudget = 64 << 20
)

// blockKey names a block of one version of a pack.
type blockKey struct {
	key, etag string
	n         int64 // the block's number: its offset is n*blockSize
}

// blockCache is the store's cache of blocks, least recently used first
// out. It is safe for concurrent use.
type blockCache struct {
	mu    sync.Mutex
	size  int64
	order *list.List // of *cachedBlock, most recently used in front
	index map[blockKey]*list.Element
}

type cachedBlock struct {
	k blockKey
	b []byte
}

func newBlockCache() *blockCache {
	return &blockCache{order: list.New(), index: map[blockKey]*list.Element{}}
}

// get returns block k if it is cached.
func (c *blockCache) get(k blockKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.index[k]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cachedBlock).b, true
}

// put caches block k, dropping the least recently used blocks past the
// budget.
func (c *blockCache) put(k blockKey, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.index[k]; ok {
		return
	}
	c.index[k] = c.order.PushFront(&cachedBlock{k, b})
	c.size += int64(len(b))
	for c.size > cacheBudget {
		last := c.order.Back()
		cb := last.Value.(*cachedBlock)
		c.order.Remove(last)
		delete(c.index, cb.k)
		c.size -= int64(len(cb.b))
	}
}
