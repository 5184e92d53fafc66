package cas

import (
	"bytes"
	"container/list"
	"context"
	"errors"
	"fmt"
	"io/fs"
)

// maxOpenPacks bounds the pack readers a Store keeps open. A store of many
// small packs (one per snapshot until a collection merges them) would
// otherwise run a mark or a verify out of file descriptors.
const maxOpenPacks = 128

// openPack opens pack p for reading: an inline pack's bytes from idx, a
// file pack from packs. A pack packs lacks is ErrMissingPack.
func openPack(ctx context.Context, idx Index, packs PackStore, p PackInfo) (PackReader, error) {
	if p.Inline {
		b, err := idx.InlinePack(p.Number)
		if err != nil {
			return nil, err
		}
		return inlineReader{bytes.NewReader(b)}, nil
	}
	var r PackReader
	var err error
	if so, ok := packs.(SizedOpener); ok && p.Size > 0 {
		r, err = so.OpenSized(ctx, p.FileName(), p.Size)
	} else {
		r, err = packs.Open(ctx, p.FileName())
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, missingPack(p)
	}
	return r, err
}

// inlineReader reads an inline pack's bytes, held in memory.
type inlineReader struct{ *bytes.Reader }

// Close has nothing to release.
func (inlineReader) Close() error { return nil }

// cachedPack is a cached pack reader and how many reads are using it.
type cachedPack struct {
	r     PackReader
	users int
	lru   *list.Element // in Store.lru; nil once evicted
}

// acquire returns the reader of pack n, opened on first use, for the
// caller to read through and then release. s.mu must not be held.
func (s *Store) acquire(ctx context.Context, n uint32) (*cachedPack, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o, ok := s.readers[n]; ok {
		o.users++
		s.lru.MoveToFront(o.lru)
		return o, nil
	}
	p, ok := s.infos[n]
	if !ok {
		var err error
		if p, err = s.index.Pack(n); err != nil {
			return nil, err
		}
		s.infos[n] = p
	}
	r, err := openPack(ctx, s.index, s.packs, p)
	if err != nil {
		return nil, err
	}
	o := &cachedPack{r: r, users: 1, lru: s.lru.PushFront(n)}
	s.readers[n] = o
	s.evictLocked()
	return o, nil
}

// release ends a read through o.
func (s *Store) release(o *cachedPack) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o.users--
	if o.lru == nil && o.users == 0 {
		_ = o.r.Close()
	}
}

// evictLocked closes the least recently used readers beyond maxOpenPacks;
// one still in use is closed by its last release.
func (s *Store) evictLocked() {
	for len(s.readers) > maxOpenPacks {
		e := s.lru.Back()
		n := e.Value.(uint32)
		o := s.readers[n]
		s.lru.Remove(e)
		delete(s.readers, n)
		o.lru = nil
		if o.users == 0 {
			_ = o.r.Close()
		}
	}
}

// Close closes the pack readers the Store opened; a read still running
// closes its own when it ends.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var first error
	for n, o := range s.readers {
		delete(s.readers, n)
		s.lru.Remove(o.lru)
		o.lru = nil
		if o.users > 0 {
			continue
		}
		if err := o.r.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// missingPack is the error of a read from pack p, which the index names
// and the pack store lacks: ErrCorrupt and ErrMissingPack.
func missingPack(p PackInfo) error {
	return fmt.Errorf("%w: pack %s is %w", ErrCorrupt, p.FileName(), ErrMissingPack)
}
