package cas

import (
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/zeebo/blake3"
)

// IDSize is the length of an ID in bytes.
const IDSize = 32

// ID names an object: the keyed BLAKE3 hash of its plain bytes.
type ID [IDSize]byte

// Kind separates the hash domains of stored objects.
type Kind uint8

// The kinds of object the store holds.
const (
	KindChunk Kind = 1 // a piece of a file's content
	KindTree  Kind = 2 // an encoded directory (see package manifest)
	// KindRecord is the backup of a snapshot's record, stored with its data so
	// that the index can be rebuilt from the packs alone (see package index).
	KindRecord Kind = 3
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindChunk:
		return "chunk"
	case KindTree:
		return "tree"
	case KindRecord:
		return "record"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Valid reports whether k is one of the known kinds.
func (k Kind) Valid() bool { return k == KindChunk || k == KindTree || k == KindRecord }

// hashContexts are the BLAKE3 derive-key contexts of each kind. They are part
// of the store format: changing one changes every ID.
var hashContexts = map[Kind]string{
	KindChunk:  "casckpt 2026-11 chunk v1",
	KindTree:   "casckpt 2026-11 tree v1",
	KindRecord: "casckpt 2026-11 record v1",
}

var hasherPools = func() map[Kind]*sync.Pool {
	pools := make(map[Kind]*sync.Pool, len(hashContexts))
	for kind, context := range hashContexts {
		var key [32]byte
		blake3.DeriveKey(context, nil, key[:])
		pools[kind] = &sync.Pool{New: func() any {
			h, err := blake3.NewKeyed(key[:])
			if err != nil {
				panic(err) // the key is always 32 bytes
			}
			return h
		}}
	}
	return pools
}()

// Sum returns the ID of data stored as the given kind. It panics on an
// invalid kind, which is a programming error.
func Sum(kind Kind, data []byte) ID {
	pool, ok := hasherPools[kind]
	if !ok {
		panic(fmt.Sprintf("cas: Sum of invalid %v", kind))
	}
	h := pool.Get().(*blake3.Hasher)
	h.Reset()
	_, _ = h.Write(data)
	var id ID
	h.Sum(id[:0])
	pool.Put(h)
	return id
}

// ParseID parses the 64 hex digits of an ID.
func ParseID(s string) (ID, error) {
	var id ID
	if len(s) != 2*IDSize {
		return id, fmt.Errorf("%q: %w", s, ErrBadID)
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, fmt.Errorf("%q: %w", s, ErrBadID)
	}
	return id, nil
}

// String returns the 64 lower-case hex digits of id.
func (id ID) String() string { return hex.EncodeToString(id[:]) }

// Short returns the first 12 hex digits of id, for people.
func (id ID) Short() string { return id.String()[:12] }

// IsZero reports whether id is the zero ID (no object).
func (id ID) IsZero() bool { return id == ID{} }

// MarshalText encodes id as hex.
func (id ID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText decodes 64 hex digits into id.
func (id *ID) UnmarshalText(b []byte) error {
	parsed, err := ParseID(string(b))
	if err != nil {
		return err
	}
	*id = parsed
	return nil
}
