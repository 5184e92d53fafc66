//go:build linux

package bench

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/manifest"
	"github.com/klauspost/compress/zstd"
)

// captured is what a first snapshot of a tree reads: the files casckpt
// captures (after the default excludes and the size limit), and their
// bytes, held in memory for the hashing and compression floors.
type captured struct {
	paths []string
	data  [][]byte
	bytes int64
}

// loadCaptured snapshots tree into a scratch store (untimed) to learn
// which files a snapshot captures, then reads them.
func loadCaptured(b *testing.B, tree string) captured {
	ctx := context.Background()
	dir := b.TempDir()
	s, err := casckpt.Open(filepath.Join(dir, "store"), casckpt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	snap(b, s, tree, casckpt.SnapshotOptions{})
	entries, err := s.Ls(ctx, tree, "@1")
	if err != nil {
		b.Fatal(err)
	}
	var c captured
	for _, e := range entries {
		if e.Entry.Kind != manifest.KindFile {
			continue
		}
		p := filepath.Join(tree, filepath.FromSlash(e.Path))
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		c.paths, c.data, c.bytes = append(c.paths, p), append(c.data, data), c.bytes+int64(len(data))
	}
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	return c
}

// floorRead reads every captured file in one goroutine (warm cache).
func floorRead(b *testing.B, c captured) {
	buf := make([]byte, 1<<20)
	for _, p := range c.paths {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, err := f.Read(buf)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		f.Close()
	}
}

// floorBLAKE3 hashes every captured file as casckpt hashes a chunk, one
// stream.
func floorBLAKE3(c captured) {
	for _, d := range c.data {
		cas.Sum(cas.KindChunk, d)
	}
}

// newFloorEncoder is cas's zstd encoder of blocks (cas/codec.go: at
// cas.BulkLevel, the level of a tree of 64 MiB and more as W1's, a
// block-sized window, no checksum) limited to one stream. Every chunk (at
// most 256 KiB) is a member of a block; only trees larger than that are
// compressed alone.
func newFloorEncoder(b *testing.B) *zstd.Encoder {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(cas.BulkLevel), zstd.WithEncoderCRC(false),
		zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(cas.BlockTargetSize), zstd.WithZeroFrames(true))
	if err != nil {
		b.Fatal(err)
	}
	return enc
}

// floorZstd compresses the captured bytes as cas stores them, on one core:
// together, in blocks of cas.BlockTargetSize.
func floorZstd(enc *zstd.Encoder, c captured) {
	var dst, block []byte
	for _, d := range c.data {
		block = append(block, d...)
		for len(block) >= cas.BlockTargetSize {
			dst = enc.EncodeAll(block[:cas.BlockTargetSize], dst[:0])
			block = append(block[:0], block[cas.BlockTargetSize:]...)
		}
	}
	enc.EncodeAll(block, dst[:0])
}

// floorPeer is the name under which a floor is recorded in samples; it
// runs in this process.
func floorPeer(name string) *hostPeer { return &hostPeer{name: "floor-" + name} }

// measureFloors records, as one round of step W1, the read, BLAKE3 and
// zstd floors over c and their sum; as one round of W2, the stat walk of
// tree; and as one round of start-up, a process that prints the version.
func measureFloors(b *testing.B, s *samples, tree string, c captured, enc *zstd.Encoder) {
	read := measure(floorPeer("read"), func() { floorRead(b, c) })
	hash := measure(floorPeer("blake3"), func() { floorBLAKE3(c) })
	comp := measure(floorPeer("zstd"), func() { floorZstd(enc, c) })
	s.add("W1", "floor-read", read)
	s.add("W1", "floor-blake3", hash)
	s.add("W1", "floor-zstd", comp)
	s.add("W1", "floor-sum", usage{wall: read.wall + hash.wall + comp.wall, cpu: read.cpu + hash.cpu + comp.cpu})
	s.add("W2", "floor-statwalk", measure(floorPeer("statwalk"), func() { statWalk(tree) }))
	measureStartup(b, s)
}

// measureStartup records a process that only prints its version: the
// floor any call through the command pays.
func measureStartup(b *testing.B, s *samples) {
	m := &procMeter{}
	home := b.TempDir()
	p := &hostPeer{name: "floor-version", procs: m}
	s.add("start-up", "casckpt-cmd", measure(p, func() { runMetered(b, m, home, "version") }))
}
