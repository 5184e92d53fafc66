package cas

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Codec says how an object's bytes are stored in its pack.
type Codec uint8

// The codecs. They are part of the pack format.
const (
	CodecRaw  Codec = 0 // stored as is
	CodecZstd Codec = 1 // one zstd frame, no frame checksum (the ID verifies)
)

// MaxObjectSize bounds the plain size of one object. Chunks are at most
// 256 KiB; trees of huge directories are the large objects.
const MaxObjectSize = 64 << 20

// encoderWindows are the window sizes of the zstd encoders, smallest
// first. An object is compressed by the smallest window that holds it
// whole, which compresses it exactly as well as a larger one would, while
// the encoder's buffers (allocated on first use, per concurrent encode)
// stay small: a short-lived process that stores a few small files then
// faults in a fraction of the memory.
var encoderWindows = [...]int{64 << 10, 256 << 10, 1 << 20}

var (
	encoders    [len(encoderWindows)]encoderOnce
	decoderOnce sync.Once
	decoder     *zstd.Decoder
)

type encoderOnce struct {
	once sync.Once
	enc  *zstd.Encoder
}

// zstdEncoder returns the encoder for an object of n bytes.
func zstdEncoder(n int) *zstd.Encoder {
	i := 0
	for i < len(encoderWindows)-1 && n > encoderWindows[i] {
		i++
	}
	e := &encoders[i]
	e.once.Do(func() {
		var err error
		e.enc, err = zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstd.SpeedDefault),
			zstd.WithEncoderCRC(false),
			zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)),
			zstd.WithWindowSize(encoderWindows[i]),
			zstd.WithZeroFrames(true))
		if err != nil {
			panic(err) // only fails on invalid options
		}
	})
	return e.enc
}

func zstdDecoder() *zstd.Decoder {
	decoderOnce.Do(func() {
		var err error
		decoder, err = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
			zstd.WithDecoderMaxMemory(MaxObjectSize),
			zstd.IgnoreChecksum(true))
		if err != nil {
			panic(err) // only fails on invalid options
		}
	})
	return decoder
}

// compress returns the stored form of data: zstd when that is smaller and
// decodes back to data, else the plain bytes. The round trip check follows
// restic: a compressor bug must never reach the disk.
func compress(data []byte) (Codec, []byte, error) {
	if len(data) < 64 {
		return CodecRaw, data, nil
	}
	packed := zstdEncoder(len(data)).EncodeAll(data, make([]byte, 0, len(data)/2))
	if len(packed) >= len(data) {
		return CodecRaw, data, nil
	}
	back, err := zstdDecoder().DecodeAll(packed, make([]byte, 0, len(data)))
	if err != nil || !bytes.Equal(back, data) {
		return 0, nil, fmt.Errorf("zstd round trip of a %d-byte object failed: %v", len(data), err)
	}
	return CodecZstd, packed, nil
}

// decompress turns stored bytes back into the plain bytes of rawLen length.
func decompress(codec Codec, stored []byte, rawLen uint32) ([]byte, error) {
	switch codec {
	case CodecRaw:
		if uint32(len(stored)) != rawLen {
			return nil, fmt.Errorf("raw object is %d bytes, index says %d", len(stored), rawLen)
		}
		return stored, nil
	case CodecZstd:
		if rawLen > MaxObjectSize {
			return nil, fmt.Errorf("object claims %d bytes, more than the %d limit", rawLen, MaxObjectSize)
		}
		out, err := zstdDecoder().DecodeAll(stored, make([]byte, 0, rawLen))
		if err != nil {
			return nil, fmt.Errorf("zstd: %v", err)
		}
		if uint32(len(out)) != rawLen {
			return nil, fmt.Errorf("object decodes to %d bytes, index says %d", len(out), rawLen)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown codec %d", codec)
}
