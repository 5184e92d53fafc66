// Package remote is what a casckpt store in a bucket keeps beside its
// packs: the commit objects that make snapshots visible to every machine,
// and the names of the commit, dropped and pin keys. It knows no S3 and
// no database: the root package moves the bytes.
//
// Vocabulary:
//   - A commit is the object a writer puts, once, after the packs it names
//     are stored: the records it adds (a snapshot record, turn records, as
//     the index encodes their backups; or writes an agent recorded) and
//     the packs it created.
//   - A key's time is the writer's clock in UTC nanoseconds, as 20 decimal
//     digits, so keys sort by time; the watermark is the newest time a
//     cache has applied.
package remote

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/internal/machine"
)

// RecordKind says what a record of a commit is.
type RecordKind byte

// Kinds of records.
const (
	RecordSnapshot RecordKind = 1 // index.EncodeBackup's bytes
	RecordTurn     RecordKind = 2 // index.EncodeTurnBackup's bytes
	// RecordWrites is index.EncodeWrites' bytes: writes an agent recorded
	// (record-write); its BackupID is a random ID that names the commit,
	// not an object.
	RecordWrites RecordKind = 3
	// RecordPolicy is index.EncodePolicy's bytes: a project's policy
	// (casckpt policy), of which the one set last wins; its BackupID is a
	// random ID that names the commit, not an object.
	RecordPolicy RecordKind = 4
)

// Record is one record a commit adds: its encoding and the ID of its
// backup object in the packs.
type Record struct {
	Kind     RecordKind
	BackupID cas.ID
	Data     []byte
}

// Pack is a pack a commit created.
type Pack struct {
	Name [16]byte
	Size int64
}

// Commit is a commit object.
type Commit struct {
	// Machine is the machine that wrote it (see docs/bucket.md,
	// "Machines"); "" in a commit of version 1, which predates machines.
	Machine string
	Records []Record
	Packs   []Pack
}

const (
	commitMagic = "CKCOMMIT"
	// version 2 adds the machine after the version byte; a commit without
	// one is written as version 1.
	version = 2
)

// MaxCommit bounds what DecodeCommit accepts, and so what a reader of a
// commit reads of the bucket: records are small, and a commit names at
// most a few thousand packs.
const MaxCommit = 64 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// EncodeCommit returns the bytes of commit c.
func EncodeCommit(c Commit) []byte {
	b := []byte(commitMagic)
	if c.Machine == "" {
		b = append(b, 1)
	} else {
		b = append(b, version)
		b = binary.AppendUvarint(b, uint64(len(c.Machine)))
		b = append(b, c.Machine...)
	}
	b = binary.AppendUvarint(b, uint64(len(c.Records)))
	for _, r := range c.Records {
		b = append(b, byte(r.Kind))
		b = append(b, r.BackupID[:]...)
		b = binary.AppendUvarint(b, uint64(len(r.Data)))
		b = append(b, r.Data...)
	}
	b = binary.AppendUvarint(b, uint64(len(c.Packs)))
	for _, p := range c.Packs {
		b = append(b, p.Name[:]...)
		b = binary.AppendUvarint(b, uint64(p.Size))
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// ErrBadCommit is the error of a commit object that does not decode.
var ErrBadCommit = errors.New("bad commit object")

// ErrNewerCommit is the error, beside ErrBadCommit, of a commit object
// whose checksum holds but whose version this casckpt does not know: a
// newer casckpt wrote it, and it is not damaged.
var ErrNewerCommit = errors.New("a newer casckpt wrote it")

// DecodeCommit parses a commit object made by EncodeCommit.
func DecodeCommit(b []byte) (Commit, error) {
	if len(b) > MaxCommit || len(b) < len(commitMagic)+1+4 || string(b[:len(commitMagic)]) != commitMagic {
		return Commit{}, fmt.Errorf("%w: no commit header", ErrBadCommit)
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return Commit{}, fmt.Errorf("%w: checksum mismatch", ErrBadCommit)
	}
	v := body[len(commitMagic)]
	if v != 1 && v != version {
		return Commit{}, fmt.Errorf("%w: version %d: %w; upgrade", ErrBadCommit, v, ErrNewerCommit)
	}
	r := reader{b: body[len(commitMagic)+1:]}
	var c Commit
	if v >= 2 {
		if c.Machine = string(r.bytes(r.count(1))); r.err == nil && !machine.Valid(c.Machine) {
			r.err = errors.New("bad machine")
		}
	}
	for n := r.count(1 + cas.IDSize + 1); n > 0 && r.err == nil; n-- {
		rec := Record{Kind: RecordKind(r.byte())}
		copy(rec.BackupID[:], r.bytes(cas.IDSize))
		rec.Data = r.bytes(r.count(1))
		if r.err == nil && ((rec.Kind < RecordSnapshot || rec.Kind > RecordPolicy) || rec.BackupID.IsZero() || len(rec.Data) == 0) {
			r.err = errors.New("bad record")
		}
		c.Records = append(c.Records, rec)
	}
	for n := r.count(16 + 1); n > 0 && r.err == nil; n-- {
		var p Pack
		copy(p.Name[:], r.bytes(16))
		size := r.uvarint()
		if r.err == nil && (size == 0 || size > 1<<40) {
			r.err = errors.New("bad pack size")
		}
		p.Size = int64(size)
		c.Packs = append(c.Packs, p)
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errors.New("trailing bytes")
	}
	if r.err != nil {
		return Commit{}, fmt.Errorf("%w: %v", ErrBadCommit, r.err)
	}
	return c, nil
}

// reader decodes a commit's body; the first error sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errors.New("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a count of items of at least min bytes each, refusing one
// that the bytes left cannot hold.
func (r *reader) count(min int) int {
	v := r.uvarint()
	if r.err == nil && v > uint64(len(r.b)/min) {
		r.err = errors.New("count past the end")
		return 0
	}
	return int(v)
}

func (r *reader) byte() byte {
	b := r.bytes(1)
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.b) {
		r.err = errors.New("cut short")
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}
