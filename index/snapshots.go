package index

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/zeebo/blake3"

	"github.com/casckpt/casckpt/cas"
)

var bucketSnapshots = []byte("snapshots")

// Stats describes a snapshot's content.
type Stats struct {
	Files int64 // regular files and links captured
	Bytes int64 // their total size
}

// Added is what a snapshot added to the store when it was taken: the
// packs it wrote, which hold only objects that no snapshot of any project
// had stored before (its tree's new objects, its record's backup and its
// turn's, if any).
type Added struct {
	Bytes int64 // the packs' size: compressed, with their framing
	Raw   int64 // the plain size of the objects in them
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
	// Exclude and MaxDirFiles are the exclusions the snapshot was taken
	// with beyond the defaults (none in records older than them): the
	// patterns and the directory file limit of scan.Options, which a
	// restore of it applies again, so that it leaves alone what they left
	// out.
	Exclude     []string
	MaxDirFiles int
	// BackupID names the backup of this record stored in the packs with
	// the snapshot's data (see EncodeBackup); zero for snapshots that have
	// none.
	BackupID cas.ID
	// Session and Turn are the host's labels of the snapshot (empty when
	// it gave none): the conversation and the turn it was taken in.
	Session string
	Turn    string
	// Added is what the snapshot stored new when it was taken; zero when
	// unknown: for records written before casckpt kept it and those a
	// repair rebuilt from their backups in the packs (written before the
	// packs' size was known).
	Added Added
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

// Each version of snapshot records holds what the one before it does and
// more: labelledVersion records carry labels; sizedVersion records carry
// what the snapshot added (Added) and their labels, empty or not;
// excludingVersion records carry the snapshot's exclusions (Exclude,
// MaxDirFiles), and its labels and what it added, zero or not. A record is
// stored in the lowest version that holds all of it, so records without
// labels keep version 1, byte for byte.
const (
	labelledVersion  = 2
	sizedVersion     = 3
	excludingVersion = 4
)

// recordVersionOf returns the version of record s's stored form, and of
// its backup's (see EncodeBackup): the lowest that holds all of it.
func recordVersionOf(s Snapshot) byte {
	switch {
	case s.excludes():
		return excludingVersion
	case s.Added.Bytes > 0:
		return sizedVersion
	case s.Session != "" || s.Turn != "":
		return labelledVersion
	}
	return recordVersion
}

// appendTail appends what versions 2 to 4 add to a record or a backup.
func appendTail(b []byte, version byte, s Snapshot) []byte {
	if version >= labelledVersion {
		b = appendString(b, s.Session)
		b = appendString(b, s.Turn)
	}
	if version >= sizedVersion {
		b = binary.AppendUvarint(b, uint64(s.Added.Bytes))
		b = binary.AppendUvarint(b, uint64(s.Added.Raw))
	}
	if version == excludingVersion {
		b = appendExclusions(b, s)
	}
	return b
}

// readTail reads what appendTail appended, refusing a second encoding of
// a record: labels in a version 2 record without any, a version 3 record
// without added bytes, a version 4 record without exclusions.
func (r *reader) readTail(version byte, s *Snapshot) {
	if version >= labelledVersion {
		s.Session, s.Turn = r.string(), r.string()
	}
	if version == labelledVersion && r.err == nil && s.Session == "" && s.Turn == "" {
		r.fail("labelled record without labels")
	}
	if version >= sizedVersion {
		s.Added.Bytes, s.Added.Raw = int64(r.uvarint()), int64(r.uvarint())
		if r.err == nil && (s.Added.Bytes < 0 || s.Added.Raw < 0 || version == sizedVersion && s.Added.Bytes == 0) {
			r.fail("sized record without added bytes")
		}
	}
	if version == excludingVersion {
		r.exclusions(s)
	}
}

// encodeSnapshot returns the stored form of s (without project and seq,
// which are its bucket and key).
func encodeSnapshot(s Snapshot) []byte {
	version := recordVersionOf(s)
	b := []byte{version}
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
	b = appendTail(b, version, s)
	if !s.BackupID.IsZero() {
		b = append(b, s.BackupID[:]...)
	}
	return b
}

// decodeSnapshot parses a snapshot record of project stored under seq.
func decodeSnapshot(project string, seq uint64, v []byte) (Snapshot, error) {
	r := reader{b: v}
	version := r.byte()
	if version < recordVersion || version > excludingVersion {
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
	r.readTail(version, &s) // one encoding per record
	if len(r.b) > 0 {
		if s.BackupID = r.id(); s.BackupID.IsZero() {
			r.fail("zero backup ID") // absent, not zero: one encoding per record
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
func (t *Tx) Snapshots(workdir string) ([]Snapshot, error) {
	b := t.projectBucket(bucketSnapshots, workdir)
	if b == nil {
		return []Snapshot{}, nil
	}
	// Records are keyed by sequence numbers, so there are at most as many
	// as the bucket's sequence: room for them up front, within reason.
	out := make([]Snapshot, 0, min(b.Sequence(), 256))
	c := b.Cursor()
	for k, v := c.Last(); k != nil; k, v = c.Prev() {
		if len(k) != 8 {
			return out, fmt.Errorf("%w: snapshot key of %s", ErrCorrupt, workdir)
		}
		s, err := decodeSnapshot(workdir, binary.BigEndian.Uint64(k), v)
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
func (t *Tx) NextSeq(workdir string) uint64 {
	if b := t.projectBucket(bucketSnapshots, workdir); b != nil {
		return b.Sequence() + 1
	}
	return 1
}

// AddSnapshot stores a new snapshot record, whose ID is set (see
// NewSnapshotID), assigning s.Seq.
func (t *Tx) AddSnapshot(s *Snapshot) error {
	if s.ID.IsZero() {
		return errors.New("index: a snapshot record needs an ID")
	}
	b, err := t.tx.Bucket(bucketSnapshots).CreateBucketIfNotExists([]byte(s.Project))
	if err != nil {
		return err
	}
	if s.Seq, err = b.NextSequence(); err != nil {
		return err
	}
	return b.Put(seqKey(s.Seq), encodeSnapshot(*s))
}

// InsertSnapshot stores a snapshot record under its own Seq, which later
// snapshots of the project then follow (to rebuild a lost index).
func (t *Tx) InsertSnapshot(s Snapshot) error {
	if s.ID.IsZero() || s.Seq == 0 {
		return errors.New("index: an inserted snapshot record needs an ID and a sequence number")
	}
	b, err := t.tx.Bucket(bucketSnapshots).CreateBucketIfNotExists([]byte(s.Project))
	if err != nil {
		return err
	}
	if s.Seq > b.Sequence() {
		if err := b.SetSequence(s.Seq); err != nil {
			return err
		}
	}
	return b.Put(seqKey(s.Seq), encodeSnapshot(s))
}

// PutSnapshot rewrites an existing snapshot record (to pin it, say).
func (t *Tx) PutSnapshot(s Snapshot) error {
	b := t.tx.Bucket(bucketSnapshots).Bucket([]byte(s.Project))
	if b == nil || b.Get(seqKey(s.Seq)) == nil {
		return fmt.Errorf("snapshot %s of %s is gone", s.ID.Short(), s.Project)
	}
	return b.Put(seqKey(s.Seq), encodeSnapshot(s))
}

// DeleteSnapshot removes a snapshot record and gives its record backup a
// tombstone. Its data stays until gc. A turn it was the last remaining
// snapshot of goes with it (see Turn).
func (t *Tx) DeleteSnapshot(s Snapshot) error {
	b := t.tx.Bucket(bucketSnapshots).Bucket([]byte(s.Project))
	if b == nil {
		return nil
	}
	if err := t.addTombstone(s.BackupID); err != nil {
		return err
	}
	if err := b.Delete(seqKey(s.Seq)); err != nil {
		return err
	}
	return t.dropTurnsOf(s)
}
