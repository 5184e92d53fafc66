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
