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

// maxParallel and maxBulkParallel cap how many blocks a Writer compresses
// at once (see parallelism and bulkBlocks). Each compression in flight
// holds an encoder and three buffers of a block and a member (plain,
// compressed and round-tripped bytes). At the better level that is about
// 9 MiB a slot (its tables alone take 4 MiB, its blocks 1 MiB): with a
// slot per core W1 took 173-191 MiB of peak RSS at GOMAXPROCS 16, and on
// a quiet 16-core machine a cap of 4 matched one slot a core
// (BENCHMARKS.md, "W1 on more cores (#30)"). A Writer set to bulk (the
// default level's tables take 1.25 MiB) takes up to 8.
const (
	maxParallel     = 4
	maxBulkParallel = 8
)

// parallelism is how many blocks a Writer not set to bulk compresses at
// once: one a core (GOMAXPROCS), at most maxParallel, so that its memory
// does not grow with the cores.
func parallelism() int { return min(runtime.GOMAXPROCS(0), maxParallel) }

// bulkBlocks returns the block size and the compressions at once of a
// Writer set to bulk: one a core up to maxBulkParallel, in blocks of
// BlockTargetSize up to maxParallel of them, of half that past it, which
// halves what each holds (about 4.5 MiB a slot). On a quiet machine
// taskset to 16 cores (W1, BENCHMARKS.md "W1 on 16 cores, measured") 8
// slots of 512 KiB took 0.313 s against 0.363 s with 8 of 1 MiB (whose
// collections at the 96 MiB limit took 0.2 s more CPU) and 0.411 s with 4
// of 1 MiB, at 89, 95 and 88 MiB of peak RSS; on 2 cores (this VM,
// BenchmarkCmdW1W2) 512 KiB blocks took 821-854 ms against 731-736 ms
// with 1 MiB (twice the blocks to start and check), and on the device
// stored 1.6% more bytes.
func bulkBlocks() (target, slots int) {
	slots = min(runtime.GOMAXPROCS(0), maxBulkParallel)
	if slots > maxParallel {
		return BlockTargetSize / 2, slots
	}
	return BlockTargetSize, slots
}

// bulkTarget and bulkSlots are bulkBlocks at the process's start: the
// bulk encoder's window and streams are made for them.
var bulkTarget, bulkSlots = bulkBlocks()

// The zstd levels of a Writer's blocks of smallBlock plain bytes and
// more: BlockLevel, or BulkLevel for a Writer set to bulk (SetBulk) or
// storing deltas (a sweep's, storeDeltas: sweepEncoder).
const (
	BlockLevel = zstd.SpeedBetterCompression
	BulkLevel  = zstd.SpeedDefault
)

var (
	objectEncoder = &encoder{opts: []zstd.EOption{
		zstd.WithEncoderLevel(zstd.SpeedDefault),
		zstd.WithEncoderConcurrency(parallelism()),
		zstd.WithWindowSize(1 << 20)}}
	// blockEncoder compresses full blocks: SpeedBetterCompression makes the
	// W3 project's blocks 7% smaller than SpeedDefault, for about 25% more
	// compression CPU. Compression is most of a first snapshot's CPU, so
	// each of parallelism's slots gets an encoder, low on buffers (its
	// tables alone take 4 MiB): W1 took 1,211 ms against 1,609 with one on
	// a quiet machine, at 69.7 MiB of peak RSS against 59.0 (the command
	// brings it back under 64: see its snapshot).
	blockEncoder = fullBlockEncoder(BlockLevel, parallelism(), BlockTargetSize)
	// bulkEncoder compresses the full blocks of a Writer set to bulk (a
	// big tree's snapshot): on GOROOT/src (W1) SpeedDefault took 0.70x
	// the better level's CPU and wall time for 4.5% more bytes, and its
	// time held within 16% from one run to the next where the better
	// level's swung 40-68% in the same minutes (its 4 MiB table, read at
	// random, pays for whatever else uses the caches). Its window is its
	// blocks' size (bulkTarget).
	bulkEncoder = fullBlockEncoder(BulkLevel, bulkSlots, bulkTarget)
	// sweepEncoder compresses the blocks of a Writer that stores deltas (a
	// sweep's), with zstd's content checksum, so that a later sweep checks
	// a delta it copies by its block's checksum instead of decoding it
	// against its base, which for W3's second collection decoded most of
	// the first snapshot's blocks again (see copyBlock). Its level is the
	// default: the blocks are mostly delta frames, which zstd shrinks no
	// further (a W3 collection's pack was 173,376 bytes against 172,155 at
	// the better level, whose 4 MiB tables took the collection turn from
	// 79-85 ms to 91-117 ms).
	sweepEncoder = withChecksum(fullBlockEncoder(BulkLevel, bulkSlots, bulkTarget))
	fastEncoder  = &encoder{opts: []zstd.EOption{
		zstd.WithEncoderLevel(zstd.SpeedFastest),
		zstd.WithEncoderConcurrency(1),
		zstd.WithLowerEncoderMem(true),
		zstd.WithWindowSize(smallBlock)}}
	decoderOnce sync.Once
	decoder     *zstd.Decoder
)

// fullBlockEncoder is an encoder of full blocks at level: one stream for
// each of slots, low on buffers, a window of a block of target bytes.
func fullBlockEncoder(level zstd.EncoderLevel, slots, target int) *encoder {
	return &encoder{opts: []zstd.EOption{
		zstd.WithEncoderLevel(level),
		zstd.WithEncoderConcurrency(slots),
		zstd.WithLowerEncoderMem(true),
		zstd.WithWindowSize(target)}}
}

// withChecksum makes e write zstd's content checksum in its frames.
func withChecksum(e *encoder) *encoder {
	e.opts = append(e.opts, zstd.WithEncoderCRC(true))
	return e
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

// zstdDecoder returns the decoder of blocks and objects stored alone. It
// ignores zstd's content checksum, which only sweepEncoder's blocks carry
// (see blockChecked).
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
	return objectEncoder.compress(data, make([]byte, 0, len(data)/2), nil)
}

// compressBlock is compress for a block's plain bytes, by enc, in
// buffers of bufs: once written, give the compressed bytes back to bufs.
func compressBlock(enc *encoder, plain []byte, bufs *buffers) (Codec, []byte, error) {
	return enc.compress(plain, bufs.out(len(plain)), bufs)
}

// SetBulk makes the Writer compress its blocks of smallBlock plain bytes
// and more at zstd's default level instead of the better one, in the
// blocks and as many at once as bulkBlocks says: for the snapshot of a
// big tree, which waits on compressing many MiB and gains little from the
// better level (see bulkEncoder). Call it before the first Put.
func (w *Writer) SetBulk() {
	w.bulk = true
	w.sizeBlocks(bulkTarget, bulkSlots)
}

// encoderFor is the encoder of a block of n plain bytes.
func (w *Writer) encoderFor(n int) *encoder {
	switch {
	case w.fastSmall && n < smallBlock:
		return fastEncoder
	case w.deltas:
		return sweepEncoder
	case w.bulk:
		return bulkEncoder
	}
	return blockEncoder
}

// compress compresses data into dst, checking the round trip in a buffer
// of bufs (nil: a new one).
func (e *encoder) compress(data, dst []byte, bufs *buffers) (Codec, []byte, error) {
	if len(data) < 64 {
		return CodecRaw, data, nil
	}
	packed := e.get().EncodeAll(data, dst)
	if len(packed) >= len(data) {
		bufs.put(packed)
		return CodecRaw, data, nil
	}
	back, err := zstdDecoder().DecodeAll(packed, bufs.out(len(data)))
	same := err == nil && bytes.Equal(back, data)
	bufs.put(back)
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
