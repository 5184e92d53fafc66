package remote

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
	"time"
)

// The objects of the two-phase gc:
//   - LeaseKey: the lease of the gc at work, renewed with conditional
//     writes; one older than its TTL by the server's clock may be taken.
//   - PendingDir<time>-<random>: a pack list, the candidates of a gc's
//     first phase (packs no live snapshot needed). Writers treat the
//     objects of these packs as absent; a later gc deletes those still
//     unneeded once the list is older than the grace period.
//   - DeletedDir<time>-<random>: a pack list of packs a gc deleted,
//     written before it deletes them, so every cache forgets them.
//   - HorizonDir<generation>: a pack list, the packs of the deleted lists
//     a gc removed once they were older than the horizon; a cache that
//     finds a generation missing since the last it applied is rebuilt.
//
// The lists live under PackListsDir inside DroppedDir, whose keys sort
// after every dropped marker's: the sync's listing of dropped markers
// after its watermark lists them all too, in the same requests.
const (
	LeaseKey     = "gc/lease"
	PackListsDir = DroppedDir + "packs/"
	PendingDir   = PackListsDir + "pending/"
	DeletedDir   = PackListsDir + "deleted/"
	HorizonDir   = PackListsDir + "horizon/"
)

// HorizonKey is the key of horizon generation g.
func HorizonKey(g uint64) string { return fmt.Sprintf("%s%0*d", HorizonDir, timeDigits, g) }

// ParseHorizon returns the generation of a key HorizonKey makes.
func ParseHorizon(key string) (uint64, bool) {
	rest, ok := strings.CutPrefix(key, HorizonDir)
	if !ok || len(rest) != timeDigits || strings.Trim(rest, "0123456789") != "" {
		return 0, false
	}
	g, err := strconv.ParseUint(rest, 10, 64)
	return g, err == nil
}

// GCKey is a new key of folder dir (PendingDir or DeletedDir) at t, with
// a random part so two gcs never pick one key.
func GCKey(dir string, t time.Time) string {
	var r [8]byte
	rand.Read(r[:]) // never fails (crypto/rand)
	return dir + keyTime(t) + "-" + hex.EncodeToString(r[:])
}

// IsGCKey reports whether key is a key GCKey makes in folder dir.
func IsGCKey(dir, key string) bool {
	rest, ok := strings.CutPrefix(key, dir)
	ts, r, ok2 := strings.Cut(rest, "-")
	return ok && ok2 && len(ts) == timeDigits && strings.Trim(ts, "0123456789") == "" &&
		len(r) == 16 && strings.Trim(r, "0123456789abcdef") == ""
}

const packListMagic = "CKPACKS1"

// MaxPackList bounds what DecodePackList accepts, and so what a reader
// of a pack list reads of the bucket.
const MaxPackList = 64 << 20

// ErrBadPackList is the error of a pack list that does not decode.
var ErrBadPackList = errors.New("bad pack list")

// EncodePackList returns the bytes of a pack list: the magic, a count,
// the 16-byte names, a CRC-32C.
func EncodePackList(names [][16]byte) []byte {
	b := []byte(packListMagic)
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, n := range names {
		b = append(b, n[:]...)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// DecodePackList parses a pack list made by EncodePackList.
func DecodePackList(b []byte) ([][16]byte, error) {
	if len(b) > MaxPackList || len(b) < len(packListMagic)+1+4 || string(b[:len(packListMagic)]) != packListMagic {
		return nil, fmt.Errorf("%w: no header", ErrBadPackList)
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrBadPackList)
	}
	r := reader{b: body[len(packListMagic):]}
	n := r.count(16)
	names := make([][16]byte, 0, n)
	for ; n > 0 && r.err == nil; n-- {
		var name [16]byte
		copy(name[:], r.bytes(16))
		names = append(names, name)
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errors.New("trailing bytes")
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPackList, r.err)
	}
	return names, nil
}
