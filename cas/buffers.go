package cas

// bufferSize is the most plain bytes a block of target bytes holds: it is
// sealed once past target, by one member at most.
func bufferSize(target int) int { return target + memberHeaderSize + MaxMemberSize }

// firstPlainSize is the capacity of a block's plain buffer when no full
// buffer is free (see buffers.plain).
const firstPlainSize = 64 << 10

// buffers recycles the block-sized buffers of one Writer (a block's plain
// bytes, its compressed bytes, the round trip check's output), which
// would otherwise be garbage every few MiB of a snapshot and grow the
// heap by as much. It keeps at most as many as the Writer uses at once
// (see Writer.blocks), and lets them go at Flush (drop). A sync.Pool shared
// by the process kept a buffer in each P's private slot, where no other
// P takes it: at GOMAXPROCS 16 a first snapshot held 22 buffers (28.7
// MiB of its heap) while it used 14 at most. A nil *buffers recycles
// nothing, and its buffers are of BlockTargetSize's blocks.
type buffers struct {
	free chan []byte
	size int // a full buffer's capacity: bufferSize of the block target
}

// newBuffers returns buffers for blocks of target bytes that keep up to n
// free buffers.
func newBuffers(n, target int) *buffers {
	return &buffers{free: make(chan []byte, n), size: bufferSize(target)}
}

// full returns an empty buffer of a full buffer's capacity.
func (b *buffers) full() []byte {
	if buf, ok := b.reuse(); ok {
		return buf
	}
	if b == nil {
		return make([]byte, 0, bufferSize(BlockTargetSize))
	}
	return make([]byte, 0, b.size)
}

// plain returns an empty buffer for a block's plain bytes: a free full
// one, else a small one that reserve grows. A turn stores a few KiB in
// each of its two blocks; a full-size buffer for each, and two more for
// each block's compressed and round-tripped bytes (see out), were 7.5 MiB
// of the 8 MiB of heap at which a process first collects, and drew a
// collection (about 3 ms of CPU) into every turn.
func (b *buffers) plain() []byte {
	if buf, ok := b.reuse(); ok {
		return buf
	}
	return make([]byte, 0, firstPlainSize)
}

// reuse returns a free full buffer, emptied, if there is one.
func (b *buffers) reuse() ([]byte, bool) {
	if b == nil {
		return nil, false
	}
	select {
	case buf := <-b.free:
		return buf[:0], true
	default:
		return nil, false
	}
}

// reserve returns plain with room for n more bytes: plain itself when it
// has the room or is a full buffer, else its bytes in a buffer twice its
// size, or in a full one once that would be half of it or more.
func (b *buffers) reserve(plain []byte, n int) []byte {
	need := len(plain) + n
	if need <= cap(plain) || cap(plain) >= b.size {
		return plain
	}
	size := max(2*cap(plain), need)
	if size >= b.size/2 {
		return append(b.full(), plain...)
	}
	return append(make([]byte, 0, size), plain...)
}

// out returns an empty buffer for the compressed or round-tripped bytes
// of a block of n plain bytes: a full one for a block of smallBlock bytes
// or more, else one of n bytes (see plain).
func (b *buffers) out(n int) []byte {
	if n >= smallBlock {
		return b.full()
	}
	return make([]byte, 0, n)
}

// put gives buf, no longer used, back for reuse if it is a full buffer
// and there is room.
func (b *buffers) put(buf []byte) {
	if b == nil || cap(buf) != b.size {
		return
	}
	select {
	case b.free <- buf:
	default:
	}
}

// drop lets the free buffers go: a Writer whose Puts are done (Flush)
// keeps none through its commit, which can be the peak of a big
// snapshot's memory (the index and stat cache of every file).
func (b *buffers) drop() {
	for {
		select {
		case <-b.free:
		default:
			return
		}
	}
}
