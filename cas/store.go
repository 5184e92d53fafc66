package cas

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"

	bolt "go.etcd.io/bbolt"
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

// Bucket names in the store's bbolt database owned by this package.
var (
	bucketObjects = []byte("objects")
	bucketPacks   = []byte("packs")
)

// PackSuffix ends the name of every pack file.
const PackSuffix = ".pack"

// CreateBuckets creates the buckets this package keeps in the database.
func CreateBuckets(tx *bolt.Tx) error {
	for _, name := range [][]byte{bucketObjects, bucketPacks} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	return nil
}

// Location is where the index says an object lives.
type Location struct {
	Pack uint32 // the pack's number in the packs bucket
	PackEntry
}

const locationSize = 18

func encodeLocation(l Location) []byte {
	b := make([]byte, 0, locationSize)
	b = binary.BigEndian.AppendUint32(b, l.Pack)
	b = binary.BigEndian.AppendUint32(b, l.Offset)
	b = binary.BigEndian.AppendUint32(b, l.RawLen)
	b = binary.BigEndian.AppendUint32(b, l.StoredLen)
	return append(b, byte(l.Kind), byte(l.Codec))
}

// DecodeLocation decodes an index value for object id.
func DecodeLocation(id ID, b []byte) (Location, error) {
	if len(b) != locationSize {
		return Location{}, fmt.Errorf("%w: index entry of %s is %d bytes", ErrCorrupt, id.Short(), len(b))
	}
	l := Location{Pack: binary.BigEndian.Uint32(b)}
	l.ID = id
	l.Offset = binary.BigEndian.Uint32(b[4:])
	l.RawLen = binary.BigEndian.Uint32(b[8:])
	l.StoredLen = binary.BigEndian.Uint32(b[12:])
	l.Kind, l.Codec = Kind(b[16]), Codec(b[17])
	if !l.valid() {
		return Location{}, fmt.Errorf("%w: index entry of %s is malformed", ErrCorrupt, id.Short())
	}
	return l, nil
}

// PackInfo is a pack's record in the packs bucket.
type PackInfo struct {
	Number uint32
	Name   [16]byte
	Size   int64
}

// FileName is the pack's file name inside the packs directory.
func (p PackInfo) FileName() string { return hex.EncodeToString(p.Name[:]) + PackSuffix }

const packInfoSize = 24

func encodePackInfo(p PackInfo) []byte {
	b := append(make([]byte, 0, packInfoSize), p.Name[:]...)
	return binary.BigEndian.AppendUint64(b, uint64(p.Size))
}

func packKey(n uint32) []byte { return binary.BigEndian.AppendUint32(nil, n) }

// DecodePackInfo decodes a packs-bucket record.
func DecodePackInfo(key, value []byte) (PackInfo, error) {
	if len(key) != 4 || len(value) != packInfoSize {
		return PackInfo{}, fmt.Errorf("%w: malformed pack record", ErrCorrupt)
	}
	p := PackInfo{Number: binary.BigEndian.Uint32(key)}
	copy(p.Name[:], value)
	p.Size = int64(binary.BigEndian.Uint64(value[16:]))
	return p, nil
}

// Packs lists the pack records of the index.
func Packs(tx *bolt.Tx) ([]PackInfo, error) {
	b := tx.Bucket(bucketPacks)
	if b == nil {
		return nil, nil
	}
	var packs []PackInfo
	err := b.ForEach(func(k, v []byte) error {
		p, err := DecodePackInfo(k, v)
		packs = append(packs, p)
		return err
	})
	return packs, err
}

// PackBytes is the total size of the packs in the index: the store's data
// size, known without walking the directory.
func PackBytes(tx *bolt.Tx) (int64, error) {
	packs, err := Packs(tx)
	var total int64
	for _, p := range packs {
		total += p.Size
	}
	return total, err
}

// ForEachObject calls fn for every object location in the index, in ID order.
// fn must not modify the index.
func ForEachObject(tx *bolt.Tx, fn func(Location) error) error {
	b := tx.Bucket(bucketObjects)
	if b == nil {
		return nil
	}
	return b.ForEach(func(k, v []byte) error {
		if len(k) != IDSize {
			return fmt.Errorf("%w: malformed object key", ErrCorrupt)
		}
		l, err := DecodeLocation(ID(k), v)
		if err != nil {
			return err
		}
		return fn(l)
	})
}

// Store reads objects through one bbolt transaction. A Store with a nil
// transaction is an empty store. It is safe for concurrent use; Close closes
// the pack files it opened but not the transaction.
type Store struct {
	dir string
	mu  sync.Mutex // guards tx (bbolt transactions are not goroutine-safe) and files
	tx  *bolt.Tx
	// packs caches pack records by number.
	packs map[uint32]PackInfo
	files map[uint32]*os.File
}

var _ Getter = (*Store)(nil)

// NewStore returns a Store reading the packs in dir through tx.
func NewStore(dir string, tx *bolt.Tx) *Store {
	return &Store{dir: dir, tx: tx, packs: map[uint32]PackInfo{}, files: map[uint32]*os.File{}}
}

// Dir is the packs directory.
func (s *Store) Dir() string { return s.dir }

// Locate returns where the index says object id lives.
func (s *Store) Locate(id ID) (Location, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.locateLocked(id)
}

func (s *Store) locateLocked(id ID) (_ Location, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil { // bbolt asserts on damaged pages
			err = fmt.Errorf("%w: object index: %v", ErrCorrupt, r)
		}
	}()
	if s.tx == nil {
		return Location{}, fmt.Errorf("%s: %w", id.Short(), ErrNotFound)
	}
	b := s.tx.Bucket(bucketObjects)
	if b == nil {
		return Location{}, fmt.Errorf("%s: %w", id.Short(), ErrNotFound)
	}
	v := b.Get(id[:])
	if v == nil {
		return Location{}, fmt.Errorf("%s: %w", id.Short(), ErrNotFound)
	}
	return DecodeLocation(id, v)
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
	s.mu.Lock()
	loc, err := s.locateLocked(id)
	var f *os.File
	if err == nil {
		f, err = s.packFileLocked(loc.Pack)
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return readObject(f, loc.PackEntry)
}

func (s *Store) packFileLocked(n uint32) (_ *os.File, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: pack index: %v", ErrCorrupt, r)
		}
	}()
	if f, ok := s.files[n]; ok {
		return f, nil
	}
	p, ok := s.packs[n]
	if !ok {
		v := s.tx.Bucket(bucketPacks).Get(packKey(n))
		if v == nil {
			return nil, fmt.Errorf("%w: pack %d is not in the index", ErrCorrupt, n)
		}
		var err error
		if p, err = DecodePackInfo(packKey(n), v); err != nil {
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
