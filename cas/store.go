package cas

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Sentinel errors of the object store.
var (
	// ErrNotFound: no object with that ID is in the index.
	ErrNotFound = errors.New("object not found")
	// ErrCorrupt: an object's stored bytes do not match its ID or its index
	// entry, or its pack is damaged or missing.
	ErrCorrupt = errors.New("object corrupt")
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
}

// FileName is the pack's file name inside the packs directory.
func (p PackInfo) FileName() string { return hex.EncodeToString(p.Name[:]) + PackSuffix }

// Store reads objects through an object index. It is safe for concurrent
// use; Close closes the pack files it opened.
type Store struct {
	dir   string
	index Index
	mu    sync.Mutex // guards packs and files
	// packs caches pack records by number.
	packs map[uint32]PackInfo
	files map[uint32]*os.File
}

var _ Getter = (*Store)(nil)

// NewStore returns a Store reading the packs in dir through the object
// index idx; a nil idx is an empty index.
func NewStore(dir string, idx Index) *Store {
	return &Store{dir: dir, index: idx, packs: map[uint32]PackInfo{}, files: map[uint32]*os.File{}}
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
	f, err := s.packFile(loc.Pack)
	if err != nil {
		return nil, err
	}
	return readObject(f, loc.PackEntry)
}

func (s *Store) packFile(n uint32) (*os.File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.files[n]; ok {
		return f, nil
	}
	p, ok := s.packs[n]
	if !ok {
		var err error
		if p, err = s.index.Pack(n); err != nil {
			return nil, err
		}
		s.packs[n] = p
	}
	f, err := os.Open(filepath.Join(s.dir, p.FileName()))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: pack %s is missing", ErrCorrupt, p.FileName())
	}
	if err != nil {
		return nil, err
	}
	s.files[n] = f
	return f, nil
}

// Close closes the pack files the Store opened.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var first error
	for n, f := range s.files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
		delete(s.files, n)
	}
	return first
}
