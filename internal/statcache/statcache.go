package statcache

import (
	"encoding/binary"
	"time"

	"github.com/zeebo/blake3"

	"github.com/casckpt/casckpt/cas"
)

// RacyWindow is how close to a scan's start a file's mtime or ctime may be
// before its stat cache entry is not trusted. It covers coarse file system
// clocks (FAT keeps 2-second mtimes) and the kernel's lagging timestamp tick.
const RacyWindow = 2 * time.Second

// FineWindow is RacyWindow for a file whose times a local file system
// keeps to the nanosecond (FileStamp's fine). There the kernel sets ctime,
// which no program can set, from its clock at every change, and that
// clock moves at every timestamp tick (1-10 ms on Linux): an edit after
// a scan read the file moves its ctime unless it came within a tick of
// the change before, so ten ticks cover it. Agents' hosts take turns back
// to back, 100-150 ms apart in the W3 benchmark, and with RacyWindow each
// turn read again the files of the turns of the last 2 s.
const FineWindow = 100 * time.Millisecond

// The stat cache keeps one record per directory of a project: the tree the
// directory had at the last scan, a hash of its entries' names and kinds,
// a stamp per entry and the tree of each subdirectory. Names are not
// stored: while the names hash matches, entries line up with the stamps by
// position; otherwise the cached tree, which holds the names, is read. A
// file whose stamp is unchanged takes its chunks from that tree without
// being read; a directory whose names, stamps and subtrees are all
// unchanged is that tree, without being encoded again.

// Dir is the stat cache record of one directory.
type Dir struct {
	Tree  cas.ID // the directory's tree at the scan that recorded it
	Names uint64 // NamesHasher.Sum of its entries
	// Stamps has one stamp per entry of Tree, in order: for a file its
	// FileStamp when hashed, for a symbolic link its LinkStamp, 0 for a
	// directory.
	Stamps []uint64
	// Subtrees has the tree of each subdirectory, in order.
	Subtrees []cas.ID
}

// NamesHasher condenses the names and kinds of a directory's entries, in
// order, into the Names of its record. Its zero value is ready; Reset
// makes it ready again, keeping its buffer.
type NamesHasher struct {
	buf []byte // each entry's name length (uvarint), name and kind
}

// Add appends the entry name of kind kind.
func (h *NamesHasher) Add(name string, kind uint8) {
	h.buf = binary.AppendUvarint(h.buf, uint64(len(name)))
	h.buf = append(h.buf, name...)
	h.buf = append(h.buf, kind)
}

// Sum is the hash of the entries added. It hashes them in one call:
// BLAKE3 is a stream hash, so this equals hashing them one by one, without
// a hasher's state to allocate, and with a listing of many entries spread
// over the SIMD lanes.
func (h *NamesHasher) Sum() uint64 {
	sum := blake3.Sum256(h.buf)
	return binary.LittleEndian.Uint64(sum[:8])
}

// Reset forgets the entries added.
func (h *NamesHasher) Reset() { h.buf = h.buf[:0] }

// FileStamp condenses a file's size, mtime, ctime, inode and mode into 64
// bits, the lowest of which says whether the entry may be trusted: it is
// clear when the file was modified within RacyWindow of the scan that read
// it (scanStart, ns), since an edit in the same timestamp tick would leave
// every field unchanged (git's "racily clean" problem). An untrusted stamp
// never equals a fresh one, so such files are read again. With fine (the
// file is on a local file system known to keep nanosecond times) and a
// ctime that is not a whole second (which such a file system, keeping only
// seconds for this inode, would give), the window is FineWindow.
func FileStamp(size, mtime, ctime int64, inode uint64, mode uint32, scanStart int64, fine bool) uint64 {
	var b [36]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(size))
	binary.LittleEndian.PutUint64(b[8:], uint64(mtime))
	binary.LittleEndian.PutUint64(b[16:], uint64(ctime))
	binary.LittleEndian.PutUint64(b[24:], inode)
	binary.LittleEndian.PutUint32(b[32:], mode)
	sum := blake3.Sum256(b[:])
	stamp := binary.LittleEndian.Uint64(sum[:]) &^ 1
	window := RacyWindow
	if fine && ctime%int64(time.Second) != 0 {
		window = FineWindow
	}
	limit := scanStart - int64(window)
	if mtime < limit && ctime < limit {
		stamp |= 1
	}
	return stamp
}

// CurrentStamp is the stamp a file's metadata must match now: as if
// recorded by a scan long after.
func CurrentStamp(size, mtime, ctime int64, inode uint64, mode uint32) uint64 {
	return FileStamp(size, mtime, ctime, inode, mode, 1<<62, false)
}

// LinkStamp condenses a symbolic link's target.
func LinkStamp(target string) uint64 {
	sum := blake3.Sum256([]byte(target))
	return binary.LittleEndian.Uint64(sum[:])
}
