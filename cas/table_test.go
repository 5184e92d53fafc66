package cas

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// packOf returns the bytes of a pack of n small raw objects.
func packOf(n int) []byte {
	b := []byte(packMagic)
	var entries []PackEntry
	for i := range n {
		data := []byte(fmt.Sprint("object ", i))
		e := PackEntry{ID: Sum(KindRecord, data), Kind: KindRecord, Codec: CodecRaw, Offset: uint32(len(b)), RawLen: uint32(len(data)), StoredLen: uint32(len(data))}
		b = append(appendObjectHeader(b, e), data...)
		entries = append(entries, e)
	}
	return append(b, encodeTrailer(entries, false)...)
}

// TestReadTableFromTail: the table read from the pack's end alone is the
// one ReadPackTable reads, in one read when it fits in the first guess and
// two otherwise; a damaged footer is an error.
func TestReadTableFromTail(t *testing.T) {
	for _, c := range []struct{ objects, reads int }{{1, 1}, {100, 1}, {3000, 2}} {
		pack := packOf(c.objects)
		size := int64(len(pack))
		reads := 0
		tail := func(n int64) ([]byte, error) {
			reads++
			if n > size {
				return nil, errors.New("read past the start")
			}
			return pack[size-n:], nil
		}
		got, err := ReadTableFromTail(size, tail)
		want, werr := ReadPackTable(bytes.NewReader(pack), size)
		if err != nil || werr != nil || !reflect.DeepEqual(got, want) || len(got) != c.objects || reads != c.reads {
			t.Fatalf("%d objects: %d entries in %d reads (%v), want %d in %d (%v)", c.objects, len(got), reads, err, len(want), c.reads, werr)
		}
		pack[size-1] ^= 1
		if _, err := ReadTableFromTail(size, tail); !errors.Is(err, ErrBadPack) {
			t.Fatalf("damaged footer: %v", err)
		}
	}
}
