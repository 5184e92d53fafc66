package cas

import (
	"bytes"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// BenchmarkDeltaEncoder: what a delta of a 10-30 KB file with a line
// changed and one added costs to make (and check), and its size
// (bytes/delta): the sweep's encoder, its dictionary reset per delta
// (fastest level, 128 KiB window), against the same reset at the default
// level and against a new default-level encoder per delta, each with the
// round trip check: the figures deltaEncoder's doc quotes.
func BenchmarkDeltaEncoder(b *testing.B) {
	bases := [][]byte{textObject(3, 12000), textObject(4, 9000), textObject(5, 30000)}
	run := func(b *testing.B, encode func(data, base []byte) []byte) {
		size, n := 0, 0
		for b.Loop() {
			base := bases[n%len(bases)]
			size += len(encode(edit(base, n%9), base))
			n++
		}
		b.ReportMetric(float64(size)/float64(n), "bytes/delta")
	}
	b.Run("reset-fastest", func(b *testing.B) {
		var d deltaEncoder
		defer d.close()
		run(b, func(data, base []byte) []byte {
			frame, err := d.encode(data, base)
			if err != nil || frame == nil {
				b.Fatalf("no delta: %v", err)
			}
			return frame
		})
	})
	defaultLevel := func(base []byte) []zstd.EOption {
		return []zstd.EOption{zstd.WithEncoderDictRaw(deltaDictID, base), zstd.WithEncoderLevel(zstd.SpeedDefault),
			zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true), zstd.WithEncoderCRC(false)}
	}
	b.Run("reset-default", func(b *testing.B) {
		enc, err := zstd.NewWriter(nil, defaultLevel(bases[0])...)
		if err != nil {
			b.Fatal(err)
		}
		defer enc.Close()
		run(b, func(data, base []byte) []byte {
			if err := enc.ResetWithOptions(nil, zstd.WithEncoderDictRaw(deltaDictID, base)); err != nil {
				b.Fatal(err)
			}
			return checked(b, enc.EncodeAll(data, nil), data, base)
		})
	})
	b.Run("new-default", func(b *testing.B) {
		run(b, func(data, base []byte) []byte {
			enc, err := zstd.NewWriter(nil, defaultLevel(base)...)
			if err != nil {
				b.Fatal(err)
			}
			defer enc.Close()
			return checked(b, enc.EncodeAll(data, nil), data, base)
		})
	})
}

// checked decodes frame against base, as deltaEncoder.encode does, and
// returns it; it fails b unless that gives data back.
func checked(b *testing.B, frame, data, base []byte) []byte {
	back, err := undelta(PackEntry{RawLen: uint32(len(data))}, frame, func(ID) ([]byte, error) { return base, nil })
	if err != nil || !bytes.Equal(back, data) {
		b.Fatalf("round trip: %v", err)
	}
	return frame
}
