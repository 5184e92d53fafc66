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

// An encoder is a zstd encoder made on first use.
type encoder struct {
	once sync.Once
	enc  *zstd.Encoder
	opts []zstd.EOption
}

// smallBlock is the plain size under which a block is compressed by
// fastEncoder. Such blocks are those of small snapshots (a turn's few
// files), where the better level's first use (its 4 MiB of tables) would
// cost more time than the turn, and few bytes are at stake: a sweep merges
// small packs into blocks of the better level.
const smallBlock = 256 << 10

// maxParallel caps Parallelism. Each compression in flight holds an
// encoder (the better level's tables alone take 4 MiB) and three block
// buffers, and each reader a chunking buffer: about 14 MiB a slot. With a
// slot per core W1 took 173-191 MiB of peak RSS and 4.1-4.5 s of CPU at
// GOMAXPROCS 16 against 60 MiB and 2.3-2.4 s at 2 (sixteen encoders'
// tables missing the caches, and the heap past the command's 96 MiB
// limit collecting without end); on a quiet 16-core machine it got no
// faster past 4 cores. There (taskset to N cores, medians of
// 4) a cap of 3 cost 20% of W1's wall time at 4 to 16 cores (0.90 s
// against 0.74 s at 4) while a cap of 4 matched one slot a core (0.75,
// 0.77 and 0.83 s at 4, 8 and 16 cores) at 89-93 MiB peak RSS and 2.4-3.0 s
// of CPU, against 165 MiB and 7.6 s at 16 cores uncapped. See
// BENCHMARKS.md, "W1 on more cores (#30)".
const maxParallel = 4

// Parallelism is how many files a snapshot reads and how many blocks it
// compresses at once: one a core (GOMAXPROCS), at most maxParallel, so
// that its memory does not grow with the cores.
func Parallelism() int { return min(runtime.GOMAXPROCS(0), maxParallel) }

// The zstd levels of a Writer's blocks of smallBlock plain bytes and
// more: BlockLevel, or BulkLevel for a Writer set to bulk (SetBulk).
const (
	BlockLevel = zstd.SpeedBetterCompression
	BulkLevel  = zstd.SpeedDefault
)

var (
	objectEncoder = &encoder{opts: []zstd.EOption{
		zstd.WithEncoderLevel(zstd.SpeedDefault),
		zstd.WithEncoderConcurrency(Parallelism()),
		zstd.WithWindowSize(1 << 20)}}
	// blockEncoder compresses full blocks: SpeedBetterCompression makes the
	// W3 project's blocks 7% smaller than SpeedDefault, for about 25% more
	// compression CPU. Compression is most of a first snapshot's CPU, so
	// each of Parallelism's slots gets an encoder, low on buffers (its
	// tables alone take 4 MiB): W1 took 1,211 ms against 1,609 with one on
	// a quiet machine, at 69.7 MiB of peak RSS against 59.0 (the command
	// brings it back under 64: see its snapshot).
	blockEncoder = fullBlockEncoder(BlockLevel)
	// bulkEncoder compresses the full blocks of a Writer set to bulk (a
	// big tree's snapshot): on GOROOT/src (W1) SpeedDefault took 0.70x
	// the better level's CPU and wall time for 4.5% more bytes, and its
	// time held within 16% from one run to the next where the better
	// level's swung 40-68% in the same minutes (its 4 MiB table, read at
	// random, pays for whatever else uses the caches).
	bulkEncoder = fullBlockEncoder(BulkLevel)
	fastEncoder = &encoder{opts: []zstd.EOption{
		zstd.WithEncoderLevel(zstd.SpeedFastest),
		zstd.WithEncoderConcurrency(1),
		zstd.WithLowerEncoderMem(true),
		zstd.WithWindowSize(smallBlock)}}
	decoderOnce sync.Once
	decoder     *zstd.Decoder
)

// fullBlockEncoder is an encoder of full blocks at level: one stream a
// slot of Parallelism, low on buffers, a block-sized window.
func fullBlockEncoder(level zstd.EncoderLevel) *encoder {
	return &encoder{opts: []zstd.EOption{
		zstd.WithEncoderLevel(level),
		zstd.WithEncoderConcurrency(Parallelism()),
		zstd.WithLowerEncoderMem(true),
		zstd.WithWindowSize(BlockTargetSize)}}
}

func (e *encoder) get() *zstd.Encoder {
	e.once.Do(func() {
		var err error
		e.enc, err = zstd.NewWriter(nil, append([]zstd.EOption{zstd.WithEncoderCRC(false), zstd.WithZeroFrames(true)}, e.opts...)...)
		if err != nil {
			panic(err) // only fails on invalid options
		}
	})
	return e.enc
}

// blockBuffers recycles buffers of a block's size (plain bytes, compressed
// bytes, the round trip check's output), which would otherwise be garbage
// every few MiB of a snapshot, and grow the heap by as much.
var blockBuffers sync.Pool

// blockBufferSize is the most plain bytes a Writer's block holds: it is
// sealed once past BlockTargetSize, by one member at most.
const blockBufferSize = BlockTargetSize + memberHeaderSize + MaxMemberSize

// getBlockBuffer returns an empty buffer of blockBufferSize capacity.
func getBlockBuffer() []byte {
	if p, ok := blockBuffers.Get().(*[]byte); ok {
		return (*p)[:0]
	}
	return make([]byte, 0, blockBufferSize)
}

// firstPlainSize is the capacity of a block's plain buffer when no
// buffer of getBlockBuffer's is free (see plainBuffer).
const firstPlainSize = 64 << 10

// plainBuffer returns an empty buffer for a block's plain bytes: a free
// one of getBlockBuffer's, else a small one that reservePlain grows. A
// turn stores a few KiB in each of its two blocks; a full-size buffer for
// each, and two more for each block's compressed and round-tripped bytes
// (see outBuffer), were 7.5 MiB of the 8 MiB of heap at which a process
// first collects, and drew a collection (about 3 ms of CPU) into every
// turn.
func plainBuffer() []byte {
	if p, ok := blockBuffers.Get().(*[]byte); ok {
		return (*p)[:0]
	}
	return make([]byte, 0, firstPlainSize)
}

// reservePlain returns plain with room for n more bytes: plain itself when
// it has the room or is of getBlockBuffer's size, else its bytes in a
// buffer twice its size, or in one of getBlockBuffer's once that would
// be half of it or more.
func reservePlain(plain []byte, n int) []byte {
	need := len(plain) + n
	if need <= cap(plain) || cap(plain) >= blockBufferSize {
		return plain
	}
	size := max(2*cap(plain), need)
	if size >= blockBufferSize/2 {
		return append(getBlockBuffer(), plain...)
	}
	return append(make([]byte, 0, size), plain...)
}

// outBuffer returns an empty buffer for the compressed or round-tripped
// bytes of a block of n plain bytes: getBlockBuffer's for a block of
// smallBlock bytes or more, else one of n bytes (see plainBuffer).
func outBuffer(n int) []byte {
	if n >= smallBlock {
		return getBlockBuffer()
	}
	return make([]byte, 0, n)
}

// putBlockBuffer gives b, no longer used, back for reuse if it is one of
// getBlockBuffer's.
func putBlockBuffer(b []byte) {
	if cap(b) == blockBufferSize {
		blockBuffers.Put(&b)
	}
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

// compress returns the stored form of an object stored alone: zstd when
// that is smaller and decodes back to data, else the plain bytes. The
// round trip check follows restic: a compressor bug must never reach the
// disk.
func compress(data []byte) (Codec, []byte, error) {
	return objectEncoder.compress(data, make([]byte, 0, len(data)/2))
}

// compressBlock is compress for a block's plain bytes, by enc. Compressed
// bytes are in a buffer of outBuffer's: once written, give them back with
// putBlockBuffer.
func compressBlock(enc *encoder, plain []byte) (Codec, []byte, error) {
	return enc.compress(plain, outBuffer(len(plain)))
}

// SetBulk makes the Writer compress its blocks of smallBlock bytes and
// more at zstd's default level instead of the better one: for the
// snapshot of a big tree, which waits on compressing many MiB and gains
// little from the better level (see bulkEncoder). Call it before the
// first Put.
func (w *Writer) SetBulk() { w.bulk = true }

// encoderFor is the encoder of a block of n plain bytes.
func (w *Writer) encoderFor(n int) *encoder {
	switch {
	case w.fastSmall && n < smallBlock:
		return fastEncoder
	case w.bulk:
		return bulkEncoder
	}
	return blockEncoder
}

// compress compresses data into dst.
func (e *encoder) compress(data, dst []byte) (Codec, []byte, error) {
	if len(data) < 64 {
		return CodecRaw, data, nil
	}
	packed := e.get().EncodeAll(data, dst)
	if len(packed) >= len(data) {
		putBlockBuffer(packed)
		return CodecRaw, data, nil
	}
	back, err := zstdDecoder().DecodeAll(packed, outBuffer(len(data)))
	same := err == nil && bytes.Equal(back, data)
	putBlockBuffer(back)
	if !same {
		return 0, nil, fmt.Errorf("zstd round trip of %d bytes failed: %v", len(data), err)
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
