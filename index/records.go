package index

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/zeebo/blake3"
	bolt "go.etcd.io/bbolt"

	"github.com/casckpt/casckpt/cas"
)

const recordVersion = 1

// Project is a working directory known to the store.
type Project struct {
	Workdir   string
	Created   time.Time
	LastTouch time.Time
}

// EncodeProject returns the stored form of p (without its workdir, the key).
func EncodeProject(p Project) []byte {
	b := []byte{recordVersion}
	b = binary.AppendVarint(b, p.Created.UnixNano())
	return binary.AppendVarint(b, p.LastTouch.UnixNano())
}

// DecodeProject parses a project record stored under workdir.
func DecodeProject(workdir string, v []byte) (Project, error) {
	r := reader{b: v}
	if r.byte() != recordVersion {
		return Project{}, fmt.Errorf("%w: project %s: unknown version", ErrCorrupt, workdir)
	}
	p := Project{Workdir: workdir, Created: r.time(), LastTouch: r.time()}
	if err := r.done(); err != nil {
		return Project{}, fmt.Errorf("project %s: %w", workdir, err)
	}
	return p, nil
}

// GetProject returns the project record of workdir, if any.
func GetProject(tx *bolt.Tx, workdir string) (Project, bool, error) {
	b := tx.Bucket(bucketProjects)
	if b == nil {
		return Project{}, false, nil
	}
	v := b.Get([]byte(workdir))
	if v == nil {
		return Project{}, false, nil
	}
	p, err := DecodeProject(workdir, v)
	return p, err == nil, err
}

// PutProject stores p.
func PutProject(tx *bolt.Tx, p Project) error {
	return tx.Bucket(bucketProjects).Put([]byte(p.Workdir), EncodeProject(p))
}

// Projects lists every project, in workdir order.
func Projects(tx *bolt.Tx) ([]Project, error) {
	var out []Project
	b := tx.Bucket(bucketProjects)
	if b == nil {
		return out, nil
	}
	err := b.ForEach(func(k, v []byte) error {
		p, err := DecodeProject(string(k), v)
		out = append(out, p)
		return err
	})
	return out, err
}

// DeleteProject removes a project with its snapshots and stat cache.
func DeleteProject(tx *bolt.Tx, workdir string) error {
	key := []byte(workdir)
	snaps, err := Snapshots(tx, workdir)
	if err != nil {
		return err
	}
	for _, s := range snaps {
		if err := addDropped(tx, s); err != nil {
			return err
		}
	}
	for _, name := range [][]byte{bucketSnapshots, bucketStatCache} {
		if b := tx.Bucket(name); b != nil && b.Bucket(key) != nil {
			if err := b.DeleteBucket(key); err != nil {
				return err
			}
		}
	}
	return tx.Bucket(bucketProjects).Delete(key)
}

// Stats describes a snapshot's content.
type Stats struct {
	Files int64 // regular files and links captured
	Bytes int64 // their total size
}

// Snapshot is a snapshot record.
type Snapshot struct {
	ID      cas.ID
	Project string
	Seq     uint64 // recording order within the project (ties of Time)
	Root    cas.ID
	Time    time.Time
	Reason  string
	Pinned  bool
	Stats   Stats
	// MaxFileSize is the file size limit the snapshot was taken with
	// (0: unknown). Files larger than it were left out, so a restore of it
	// leaves them alone.
	MaxFileSize int64
	// RecordID names the copy of this record stored in the packs with the
	// snapshot's data (see EncodeCopy); zero for snapshots that have none.
	RecordID cas.ID
}

// NewSnapshotID returns the ID of a new snapshot record: a hash over what
// identifies it and 16 random bytes, so two records never share an ID, even
// two of one tree taken in the same nanosecond.
func NewSnapshotID(project string, root cas.ID, t time.Time, reason string) cas.ID {
	var nonce [16]byte
	_, _ = rand.Read(nonce[:]) // never fails (crypto/rand)
	h := blake3.NewDeriveKey("casckpt 2026-11 snapshot v2")
	var b []byte
	b = binary.AppendUvarint(b, uint64(len(project)))
	b = append(b, project...)
	b = append(b, nonce[:]...)
	b = append(b, root[:]...)
	b = binary.AppendVarint(b, t.UnixNano())
	b = append(b, reason...)
	_, _ = h.Write(b)
	var id cas.ID
	h.Sum(id[:0])
	return id
}

// EncodeSnapshot returns the stored form of s (without project and seq,
// which are its bucket and key).
func EncodeSnapshot(s Snapshot) []byte {
	b := []byte{recordVersion}
	b = append(b, s.ID[:]...)
	b = append(b, s.Root[:]...)
	b = binary.AppendVarint(b, s.Time.UnixNano())
	var flags byte
	if s.Pinned {
		flags |= 1
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(len(s.Reason)))
	b = append(b, s.Reason...)
	b = binary.AppendUvarint(b, uint64(s.Stats.Files))
	b = binary.AppendUvarint(b, uint64(s.Stats.Bytes))
	b = binary.AppendUvarint(b, uint64(s.MaxFileSize))
	if !s.RecordID.IsZero() {
		b = append(b, s.RecordID[:]...)
	}
	return b
}

// DecodeSnapshot parses a snapshot record of project stored under seq.
func DecodeSnapshot(project string, seq uint64, v []byte) (Snapshot, error) {
	r := reader{b: v}
	if r.byte() != recordVersion {
		return Snapshot{}, fmt.Errorf("%w: snapshot %d of %s: unknown version", ErrCorrupt, seq, project)
	}
	s := Snapshot{Project: project, Seq: seq}
	s.ID = r.id()
	s.Root = r.id()
	s.Time = r.time()
	flags := r.byte()
	if flags > 1 {
		r.fail("bad flags")
	}
	s.Pinned = flags&1 != 0
	s.Reason = string(r.bytes(r.uvarint()))
	s.Stats.Files = int64(r.uvarint())
	s.Stats.Bytes = int64(r.uvarint())
	s.MaxFileSize = int64(r.uvarint())
	if len(r.b) > 0 {
		if s.RecordID = r.id(); s.RecordID.IsZero() {
			r.fail("zero record ID") // absent, not zero: one encoding per record
		}
	}
	if err := r.done(); err != nil {
		return Snapshot{}, fmt.Errorf("snapshot %d of %s: %w", seq, project, err)
	}
	return s, nil
}

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// Snapshots lists a project's snapshots, newest first: by time, and among
// snapshots of the same time the later recorded first. The time decides, not
// the order of recording, because an import (a migration) records snapshots
// older than those the project already has; so @1 is always the newest and
// retention drops the oldest.
func Snapshots(tx *bolt.Tx, workdir string) ([]Snapshot, error) {
	out := []Snapshot{}
	root := tx.Bucket(bucketSnapshots)
	if root == nil {
		return out, nil
	}
	b := root.Bucket([]byte(workdir))
	if b == nil {
		return out, nil
	}
	c := b.Cursor()
	for k, v := c.Last(); k != nil; k, v = c.Prev() {
		if len(k) != 8 {
			return out, fmt.Errorf("%w: snapshot key of %s", ErrCorrupt, workdir)
		}
		s, err := DecodeSnapshot(workdir, binary.BigEndian.Uint64(k), v)
		if err != nil {
			return out, err
		}
		out = append(out, s)
	}
	slices.SortStableFunc(out, func(a, b Snapshot) int { return b.Time.Compare(a.Time) })
	return out, nil
}

// NextSeq is the sequence number the project's next snapshot will get,
// unless another is added first.
func NextSeq(tx *bolt.Tx, workdir string) uint64 {
	if root := tx.Bucket(bucketSnapshots); root != nil {
		if b := root.Bucket([]byte(workdir)); b != nil {
			return b.Sequence() + 1
		}
	}
	return 1
}

// AddSnapshot stores a new snapshot record, whose ID is set (see
// NewSnapshotID), assigning s.Seq.
func AddSnapshot(tx *bolt.Tx, s *Snapshot) error {
	if s.ID.IsZero() {
		return errors.New("index: a snapshot record needs an ID")
	}
	b, err := tx.Bucket(bucketSnapshots).CreateBucketIfNotExists([]byte(s.Project))
	if err != nil {
		return err
	}
	if s.Seq, err = b.NextSequence(); err != nil {
		return err
	}
	return b.Put(seqKey(s.Seq), EncodeSnapshot(*s))
}

// InsertSnapshot stores a snapshot record under its own Seq, which later
// snapshots of the project then follow (to rebuild a lost index).
func InsertSnapshot(tx *bolt.Tx, s Snapshot) error {
	if s.ID.IsZero() || s.Seq == 0 {
		return errors.New("index: an inserted snapshot record needs an ID and a sequence number")
	}
	b, err := tx.Bucket(bucketSnapshots).CreateBucketIfNotExists([]byte(s.Project))
	if err != nil {
		return err
	}
	if s.Seq > b.Sequence() {
		if err := b.SetSequence(s.Seq); err != nil {
			return err
		}
	}
	return b.Put(seqKey(s.Seq), EncodeSnapshot(s))
}

// PutSnapshot rewrites an existing snapshot record (to pin it, say).
func PutSnapshot(tx *bolt.Tx, s Snapshot) error {
	b := tx.Bucket(bucketSnapshots).Bucket([]byte(s.Project))
	if b == nil || b.Get(seqKey(s.Seq)) == nil {
		return fmt.Errorf("snapshot %s of %s is gone", s.ID.Short(), s.Project)
	}
	return b.Put(seqKey(s.Seq), EncodeSnapshot(s))
}

// DeleteSnapshot removes a snapshot record. Its data stays until gc.
func DeleteSnapshot(tx *bolt.Tx, s Snapshot) error {
	b := tx.Bucket(bucketSnapshots).Bucket([]byte(s.Project))
	if b == nil {
		return nil
	}
	if err := addDropped(tx, s); err != nil {
		return err
	}
	return b.Delete(seqKey(s.Seq))
}

var bucketDropped = []byte("dropped")

// addDropped notes that s was dropped, so that a repair does not bring it
// back from the copy of its record while that copy is still in a pack.
func addDropped(tx *bolt.Tx, s Snapshot) error {
	if s.RecordID.IsZero() {
		return nil
	}
	return SetDropped(tx, s.RecordID, [16]byte{})
}

// Dropped returns the record copies of dropped snapshots that may still be
// in a pack, each with the name of the pack it was seen in (zero when it
// was not looked up yet).
func Dropped(tx *bolt.Tx) (map[cas.ID][16]byte, error) {
	out := map[cas.ID][16]byte{}
	b := tx.Bucket(bucketDropped)
	if b == nil {
		return out, nil
	}
	err := b.ForEach(func(k, v []byte) error {
		if len(k) != cas.IDSize || (len(v) != 0 && len(v) != 16) {
			return fmt.Errorf("%w: dropped record entry", ErrCorrupt)
		}
		var pack [16]byte
		copy(pack[:], v)
		out[cas.ID(k)] = pack
		return nil
	})
	return out, err
}

// SetDropped notes that copy id, of a dropped snapshot, is in the named
// pack (zero: not looked up yet).
func SetDropped(tx *bolt.Tx, id cas.ID, pack [16]byte) error {
	b, err := tx.CreateBucketIfNotExists(bucketDropped)
	if err != nil {
		return err
	}
	var v []byte
	if pack != ([16]byte{}) {
		v = pack[:]
	}
	return b.Put(id[:], v)
}

// DeleteDropped takes copy id off the dropped list: no pack holds it any
// more.
func DeleteDropped(tx *bolt.Tx, id cas.ID) error {
	b := tx.Bucket(bucketDropped)
	if b == nil {
		return nil
	}
	return b.Delete(id[:])
}

// reader decodes records, remembering the first error.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrCorrupt, what)
	}
}

func (r *reader) byte() byte {
	if r.err != nil || len(r.b) == 0 {
		r.fail("truncated")
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) bytes(n uint64) []byte {
	if r.err != nil || n > uint64(len(r.b)) {
		r.fail("truncated")
		return nil
	}
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}

func (r *reader) id() (id cas.ID) {
	copy(id[:], r.bytes(cas.IDSize))
	return id
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || n != len(binary.AppendUvarint(nil, v)) {
		r.fail("bad or overlong varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 || n != len(binary.AppendVarint(nil, v)) {
		r.fail("bad or overlong varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) time() time.Time { return time.Unix(0, r.varint()) }

func (r *reader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.fail("trailing bytes")
	}
	return r.err
}

var bucketOrigins = []byte("origins")

// Origin returns the snapshot recorded for an import origin (see PutOrigin).
func Origin(tx *bolt.Tx, origin string) (cas.ID, bool) {
	b := tx.Bucket(bucketOrigins)
	if b == nil {
		return cas.ID{}, false
	}
	v := b.Get([]byte(origin))
	if len(v) != cas.IDSize {
		return cas.ID{}, false
	}
	return cas.ID(v), true
}

// PutOrigin records that origin (a source such as a migrated commit) was
// imported as snapshot id. Origins outlive their snapshots, so an import
// is never repeated.
func PutOrigin(tx *bolt.Tx, origin string, id cas.ID) error {
	b, err := tx.CreateBucketIfNotExists(bucketOrigins)
	if err != nil {
		return err
	}
	return b.Put([]byte(origin), id[:])
}

// Origins returns every import origin recorded, with its snapshot.
func Origins(tx *bolt.Tx) (map[string]cas.ID, error) {
	out := map[string]cas.ID{}
	b := tx.Bucket(bucketOrigins)
	if b == nil {
		return out, nil
	}
	err := b.ForEach(func(k, v []byte) error {
		if len(v) != cas.IDSize {
			return fmt.Errorf("%w: origin %q", ErrCorrupt, k)
		}
		out[string(k)] = cas.ID(v)
		return nil
	})
	return out, err
}
