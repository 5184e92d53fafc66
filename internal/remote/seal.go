package remote

import (
	"bytes"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/zeebo/blake3"
)

// A fleet key signs the objects a fleet's writers put, so that a reader
// holding it ignores those anyone else put (docs/bucket.md, "Trust").
// The MAC of an object is BLAKE3 keyed with the key, over its name's
// length, its name and its bytes: an object cannot be moved under another
// name. An object that is read (a commit, a pack list) carries it as a
// trailer, sealMagic after the 32 bytes of the MAC; an empty marker (a
// drop, a pin) carries it in its name, after a dot, in hex, so that
// listing it is enough. Packs carry none: every object read from one is
// checked against its ID, and IDs come from the records of signed
// commits.

// FleetKey is a key derived from a fleet's secret. A nil *FleetKey is no
// key: nothing is signed, and a signature is stripped unchecked.
type FleetKey struct{ key [32]byte }

// fleetContext is the BLAKE3 key derivation context of fleet keys.
const fleetContext = "casckpt 2026-11 fleet key v1"

// NewFleetKey derives the fleet key of secret (nil for "").
func NewFleetKey(secret string) *FleetKey {
	if secret == "" {
		return nil
	}
	k := &FleetKey{}
	blake3.DeriveKey(fleetContext, []byte(secret), k.key[:])
	return k
}

// Fingerprint names the key without revealing it ("" for no key): a
// cache records the key its records were checked with.
func (k *FleetKey) Fingerprint() string {
	if k == nil {
		return ""
	}
	m := k.mac("casckpt fingerprint", nil)
	return hex.EncodeToString(m[:8])
}

func (k *FleetKey) mac(name string, body []byte) [32]byte {
	h, err := blake3.NewKeyed(k.key[:])
	if err != nil {
		panic(err) // the key is 32 bytes
	}
	h.Write(binary.AppendUvarint(nil, uint64(len(name))))
	h.Write([]byte(name))
	h.Write(body)
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// Errors of objects that a fleet key refuses.
var (
	ErrUnsigned     = errors.New("carries no fleet signature")
	ErrBadSignature = errors.New("carries a fleet signature that the fleet key does not make")
)

// sealMagic ends a sealed object, after its MAC.
const sealMagic = "CKSEAL1\n"

const sealSize = 32 + len(sealMagic)

// Seal returns body as stored under name: followed by its MAC and
// sealMagic (k nil: body as it is).
func (k *FleetKey) Seal(name string, body []byte) []byte {
	if k == nil {
		return body
	}
	m := k.mac(name, body)
	return append(append(append([]byte(nil), body...), m[:]...), sealMagic...)
}

// Open returns the body of object b read under name. With a key, b must
// carry the MAC the key makes (ErrUnsigned, ErrBadSignature); without,
// a seal is stripped unchecked.
func (k *FleetKey) Open(name string, b []byte) ([]byte, error) {
	sealed := len(b) >= sealSize && bytes.HasSuffix(b, []byte(sealMagic))
	switch {
	case !sealed && k == nil:
		return b, nil
	case !sealed:
		return nil, fmt.Errorf("%s %w", name, ErrUnsigned)
	}
	body, m := b[:len(b)-sealSize], b[len(b)-sealSize:len(b)-len(sealMagic)]
	if k != nil {
		want := k.mac(name, body)
		if subtle.ConstantTimeCompare(want[:], m) != 1 {
			return nil, fmt.Errorf("%s %w", name, ErrBadSignature)
		}
	}
	return body, nil
}

// SignName returns the name under which the empty marker name is put:
// name, a dot and its MAC in hex (k nil: name).
func (k *FleetKey) SignName(name string) string {
	if k == nil {
		return name
	}
	m := k.mac(name, nil)
	return name + "." + hex.EncodeToString(m[:])
}

// OpenName returns the name of the marker listed as signed, without its
// MAC. With a key, signed must carry the MAC the key makes; without, a
// MAC is stripped unchecked.
func (k *FleetKey) OpenName(signed string) (string, error) {
	name, m, ok := cutMAC(signed)
	switch {
	case !ok && k == nil:
		return signed, nil
	case !ok:
		return "", fmt.Errorf("%s %w", signed, ErrUnsigned)
	case k != nil:
		want := k.mac(name, nil)
		if subtle.ConstantTimeCompare(want[:], m) != 1 {
			return "", fmt.Errorf("%s %w", signed, ErrBadSignature)
		}
	}
	return name, nil
}

// cutMAC splits a signed marker name at its last dot into the name and
// the MAC; ok is false when it carries none.
func cutMAC(signed string) (name string, mac []byte, ok bool) {
	i := strings.LastIndexByte(signed, '.')
	if i < 0 || len(signed)-i-1 != 64 {
		return signed, nil, false
	}
	mac, err := hex.DecodeString(signed[i+1:])
	if err != nil || hex.EncodeToString(mac) != signed[i+1:] {
		return signed, nil, false
	}
	return signed[:i], mac, true
}

// Unsealed returns the body of object b, its seal (if any) stripped
// unchecked: for objects read whether signed or not.
func Unsealed(name string, b []byte) []byte {
	body, _ := (*FleetKey)(nil).Open(name, b)
	return body
}
