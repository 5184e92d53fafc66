package index

import (
	"bytes"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// An inline pack's bytes are stored in the "inline" bucket in pieces of at
// most inlinePiece bytes, under the keys number:u32 piece:u16 (big-endian,
// pieces from 0), since SchemaInlinePieces; a database of SchemaInline may
// still hold a pack as one value under number:u32, which is read, counted
// and deleted the same way (its key sorts before its pack's pieces).
//
// A value larger than a page takes a run of consecutive pages (bbolt's
// overflow pages), which the pages that each transaction frees (the
// object index's pages copied on write) seldom form: a turn's inline pack
// of 20-30 KB then extended the file, and W3's database after 40 turns
// held 264-300 KB of free pages beside 160 KB of inline packs. bbolt puts
// at least two keys on a page, so two pieces fill a 4 KiB page, and any
// free page takes them: W3's database after 40 turns took 508 KiB against
// 624 (pieces of 4000 bytes, two to a run of two pages: 524; of 1000,
// half-filled pages: 612). See BENCHMARKS.md, "W3's store against git's".
const inlinePiece = 2000

// inlineKey is the key of piece i of inline pack n.
func inlineKey(n uint32, i int) []byte {
	return binary.BigEndian.AppendUint16(packKey(n), uint16(i))
}

// putInline stores the bytes of inline pack n in b, in pieces (one, empty,
// for no bytes, so that the pack is found).
func putInline(b *bolt.Bucket, n uint32, data []byte) error {
	if (len(data)+inlinePiece-1)/inlinePiece > 1<<16 {
		return fmt.Errorf("index: an inline pack of %d bytes is too large", len(data))
	}
	for i := 0; ; i++ {
		piece := data[:min(len(data), inlinePiece)]
		if err := b.Put(inlineKey(n, i), piece); err != nil {
			return err
		}
		if data = data[len(piece):]; len(data) == 0 {
			return nil
		}
	}
}

// readInline returns a copy of the bytes of inline pack n in b (nil when b
// is nil), and whether b holds any of them.
func readInline(b *bolt.Bucket, n uint32) (data []byte, found bool) {
	if b == nil {
		return nil, false
	}
	prefix := packKey(n)
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		data, found = append(data, v...), true
	}
	return data, found
}

// deleteInline deletes the bytes of inline pack n from b.
func deleteInline(b *bolt.Bucket, n uint32) error {
	prefix := packKey(n)
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}

// countInline counts the inline packs in b and their bytes.
func countInline(b *bolt.Bucket) (n int, size int64) {
	var last []byte
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) < 4 || !bytes.Equal(k[:4], last) {
			n++
			last = k[:min(4, len(k))]
		}
		size += int64(len(v))
	}
	return n, size
}
