package index

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/casckpt/casckpt/cas"
)

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
	var canonical [binary.MaxVarintLen64]byte
	if n <= 0 || n != binary.PutUvarint(canonical[:], v) {
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

// string reads a length-prefixed string (see appendString).
func (r *reader) string() string { return string(r.bytes(r.uvarint())) }

// appendTime appends t as read by reader.time.
func appendTime(b []byte, t time.Time) []byte { return binary.AppendVarint(b, t.UnixNano()) }

// appendString appends s with its length before it.
func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func (r *reader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.fail("trailing bytes")
	}
	return r.err
}
