package index

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
)

// Format versions of record backups are those of the records (see
// recordVersionOf): version 2 adds the snapshot's labels and is written
// only for labelled snapshots, so a backup of an unlabelled one is what
// version 1 wrote; version 3 adds what the snapshot added (Added), known
// only once its packs are written: the backup a bucket's commit carries
// has it, the one stored in the packs beside the snapshot's data does not;
// version 4 adds the exclusions, for snapshots taken with some.

// EncodeBackup returns the backup of snapshot record s that is stored in
// the packs, as an object of kind cas.KindRecord, beside the snapshot's
// data, so that a lost index can be rebuilt from the packs alone. It holds
// all of s but Pinned, which changes, and BackupID, which is the backup's
// own ID. s.Seq is a hint: the sequence number the snapshot expected, by
// which backups of one project are ordered. origin is what the snapshot was
// imported from ("" when it was not; see PutOrigin).
func EncodeBackup(s Snapshot, origin string) []byte {
	version := recordVersionOf(s)
	b := []byte{version}
	b = binary.AppendUvarint(b, uint64(len(s.Project)))
	b = append(b, s.Project...)
	b = append(b, s.ID[:]...)
	b = append(b, s.Root[:]...)
	b = binary.AppendVarint(b, s.Time.UnixNano())
	b = binary.AppendUvarint(b, s.Seq)
	b = binary.AppendUvarint(b, uint64(len(s.Reason)))
	b = append(b, s.Reason...)
	b = binary.AppendUvarint(b, uint64(s.Stats.Files))
	b = binary.AppendUvarint(b, uint64(s.Stats.Bytes))
	b = binary.AppendUvarint(b, uint64(s.MaxFileSize))
	b = appendString(b, origin)
	return appendTail(b, version, s)
}

// DecodeBackup parses a record backup made by EncodeBackup. The record's
// BackupID is left zero: it is the ID of b.
func DecodeBackup(b []byte) (s Snapshot, origin string, err error) {
	r := reader{b: b}
	version := r.byte()
	if version < recordVersion || version > excludingVersion {
		return Snapshot{}, "", fmt.Errorf("%w: record backup: unknown version", ErrCorrupt)
	}
	s.Project = string(r.bytes(r.uvarint()))
	s.ID = r.id()
	s.Root = r.id()
	s.Time = r.time()
	s.Seq = r.uvarint()
	s.Reason = string(r.bytes(r.uvarint()))
	s.Stats.Files = int64(r.uvarint())
	s.Stats.Bytes = int64(r.uvarint())
	s.MaxFileSize = int64(r.uvarint())
	origin = r.string()
	r.readTail(version, &s) // one encoding per record
	if r.err == nil && (!filepath.IsAbs(s.Project) || filepath.Clean(s.Project) != s.Project) {
		r.fail("project is not a clean absolute path")
	}
	if r.err == nil && (s.ID.IsZero() || s.Root.IsZero() || s.Seq == 0) {
		r.fail("zero ID, root or sequence number")
	}
	if r.err == nil && (s.Stats.Files < 0 || s.Stats.Bytes < 0 || s.MaxFileSize < 0) {
		r.fail("negative size")
	}
	if err := r.done(); err != nil {
		return Snapshot{}, "", fmt.Errorf("record backup: %w", err)
	}
	return s, origin, nil
}
