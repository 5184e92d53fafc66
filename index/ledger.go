package index

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/casckpt/casckpt/cas"
)

// bucketLedger holds a bucket per project: the write ledger, a record per
// path an agent wrote, keyed by the path.
var bucketLedger = []byte("ledger")

// LedgerLimit is the most recorded writes a project keeps: the oldest go
// first. Hermes keeps 2,000.
const LedgerLimit = 4096

// Write is an agent's write of one path, as the host recorded it.
type Write struct {
	Path string // relative to the project, slash-separated
	// State identifies what the agent left at Path (the caller's content
	// key of the entry); zero when the agent deleted it.
	State cas.ID
	Time  time.Time
	Seq   uint64 // recording order within the project
}

const writeVersion = 1

func encodeWrite(w Write) []byte {
	b := []byte{writeVersion}
	b = binary.AppendUvarint(b, w.Seq)
	b = appendTime(b, w.Time)
	if !w.State.IsZero() {
		b = append(b, w.State[:]...)
	}
	return b
}

func decodeWrite(path string, v []byte) (Write, error) {
	r := reader{b: v}
	if r.byte() != writeVersion {
		return Write{}, fmt.Errorf("%w: recorded write of %q: unknown version", ErrCorrupt, path)
	}
	w := Write{Path: path, Seq: r.uvarint(), Time: r.time()}
	if len(r.b) > 0 {
		if w.State = r.id(); w.State.IsZero() {
			r.fail("zero state") // absent, not zero: one encoding per record
		}
	}
	if err := r.done(); err != nil {
		return Write{}, fmt.Errorf("recorded write of %q: %w", path, err)
	}
	return w, nil
}

// Writes returns a project's recorded writes, by path.
func (t *Tx) Writes(workdir string) (map[string]Write, error) {
	out := map[string]Write{}
	b := t.projectBucket(bucketLedger, workdir)
	if b == nil {
		return out, nil
	}
	err := b.ForEach(func(k, v []byte) error {
		w, err := decodeWrite(string(k), v)
		if err != nil {
			return err
		}
		out[w.Path] = w
		return nil
	})
	return out, err
}

// RecordWrites adds writes to project workdir's ledger, numbering them in
// order (a path recorded again keeps only its newest write), and drops the
// oldest entries past LedgerLimit.
func (t *Tx) RecordWrites(workdir string, writes []Write) error {
	if len(writes) == 0 {
		return nil
	}
	root, err := t.tx.CreateBucketIfNotExists(bucketLedger)
	if err != nil {
		return err
	}
	b, err := root.CreateBucketIfNotExists([]byte(workdir))
	if err != nil {
		return err
	}
	for _, w := range writes {
		if w.Seq, err = b.NextSequence(); err != nil {
			return err
		}
		if err := b.Put([]byte(w.Path), encodeWrite(w)); err != nil {
			return err
		}
	}
	all, err := t.Writes(workdir)
	if err != nil || len(all) <= LedgerLimit {
		return err
	}
	list := slices.SortedFunc(maps.Values(all), func(a, b Write) int { return cmp.Compare(a.Seq, b.Seq) })
	for _, w := range list[:len(list)-LedgerLimit] {
		if err := b.Delete([]byte(w.Path)); err != nil {
			return err
		}
	}
	return nil
}

// writesBackupVersion is the version of EncodeWrites' encoding.
const writesBackupVersion = 1

// EncodeWrites encodes writes recorded in project workdir's ledger (their
// paths, states and times; not their numbers, which each ledger gives
// anew), for a store in a bucket to share them: DecodeWrites reads them.
func EncodeWrites(workdir string, writes []Write) []byte {
	b := []byte{writesBackupVersion}
	b = appendString(b, workdir)
	b = binary.AppendUvarint(b, uint64(len(writes)))
	for _, w := range writes {
		b = appendString(b, w.Path)
		b = appendTime(b, w.Time)
		if w.State.IsZero() {
			b = append(b, 0)
		} else {
			b = append(b, 1)
			b = append(b, w.State[:]...)
		}
	}
	return b
}

// DecodeWrites reads what EncodeWrites wrote.
func DecodeWrites(b []byte) (workdir string, writes []Write, err error) {
	r := reader{b: b}
	if r.byte() != writesBackupVersion {
		return "", nil, fmt.Errorf("%w: recorded writes: unknown version", ErrCorrupt)
	}
	workdir = r.string()
	n := r.uvarint()
	if n > uint64(len(r.b)) { // each write takes a byte at least
		r.fail("bad count")
	}
	for i := uint64(0); i < n && r.err == nil; i++ {
		w := Write{Path: r.string(), Time: r.time()}
		switch r.byte() {
		case 0:
		case 1:
			if w.State = r.id(); w.State.IsZero() {
				r.fail("zero state")
			}
		default:
			r.fail("bad state flag")
		}
		writes = append(writes, w)
	}
	if err := r.done(); err != nil {
		return "", nil, fmt.Errorf("recorded writes: %w", err)
	}
	if workdir == "" {
		return "", nil, fmt.Errorf("%w: recorded writes: no project", ErrCorrupt)
	}
	return workdir, writes, nil
}

// ApplyWrites adds to project workdir's ledger the writes another machine
// recorded (DecodeWrites), oldest first, each unless the ledger holds a
// write of its path recorded later.
func (t *Tx) ApplyWrites(workdir string, writes []Write) error {
	have, err := t.Writes(workdir)
	if err != nil {
		return err
	}
	var add []Write
	for _, w := range slices.SortedStableFunc(slices.Values(writes), func(a, b Write) int { return a.Time.Compare(b.Time) }) {
		if h, ok := have[w.Path]; ok && h.Time.After(w.Time) {
			continue
		}
		add = append(add, w)
	}
	return t.RecordWrites(workdir, add)
}
