package gitimport

import (
	"bufio"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// go-git inflates a packed object of up to 16 KiB (and a delta's
// instructions) whole, without bounding the stream by the size its header
// declares: a zlib bomb in a pack file. Before go-git reads a packed
// object, checkPacked inflates, to nowhere, each stream of its delta chain
// not checked before, and refuses one that inflates past its declared
// size or declares more than the reader allows.

// maxDeltaDepth bounds a delta chain (git writes at most 50 by default,
// 250 with gc --aggressive).
const maxDeltaDepth = 1000

// pack is one pack file of an objects directory, with its index.
type pack struct {
	name    string
	idx     *idxfile.MemoryIndex
	file    *os.File
	checked map[int64]bool // offsets whose streams inflate as declared
}

// loadPacks opens the indexed pack files of every objects directory,
// once. A pack that cannot be read is left out: go-git then fails to find
// its objects, or reads them itself and meets the same damage.
func (o *objectReader) loadPacks() {
	if o.packsLoaded {
		return
	}
	o.packsLoaded = true
	for _, root := range o.loose {
		dir, err := root.Open("pack")
		if err != nil {
			continue
		}
		names, _ := dir.Readdirnames(-1)
		_ = dir.Close() // read only
		for _, n := range names {
			base, ok := strings.CutSuffix(n, ".idx")
			if !ok {
				continue
			}
			if p, err := openPack(root, "pack/"+base); err == nil {
				o.packs = append(o.packs, p)
			}
		}
	}
}

func openPack(root *os.Root, base string) (*pack, error) {
	f, err := root.Open(base + ".idx")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	idx := idxfile.NewMemoryIndex()
	if err := idxfile.NewDecoder(bufio.NewReader(f)).Decode(idx); err != nil {
		return nil, err
	}
	file, err := root.Open(base + ".pack")
	if err != nil {
		return nil, err
	}
	return &pack{name: base, idx: idx, file: file, checked: map[int64]bool{}}, nil
}

// checkPacked checks the streams of packed object h and of its delta
// chain: each must inflate to exactly the size its header declares, at
// most bound bytes. An object in no pack passes.
func (o *objectReader) checkPacked(h plumbing.Hash, bound int64) error {
	o.loadPacks()
	for _, p := range o.packs {
		off, err := p.idx.FindOffset(h)
		if err != nil {
			continue
		}
		for range maxDeltaDepth {
			if p.checked[off] {
				return nil
			}
			base, err := p.checkAt(off, bound)
			if err != nil {
				return fmt.Errorf("%s at %d: %w", p.name, off, err)
			}
			p.checked[off] = true
			if base < 0 {
				return nil
			}
			off = base
		}
		return fmt.Errorf("%s: a delta chain longer than %d", p.name, maxDeltaDepth)
	}
	return nil
}

// checkAt checks the object stream at off: base is the offset of its
// delta base, -1 for an object that is not a delta.
func (p *pack) checkAt(off, bound int64) (base int64, _ error) {
	r := bufio.NewReaderSize(io.NewSectionReader(p.file, off, 1<<62), 4096)
	typ, size, err := packHeader(r)
	if err != nil {
		return 0, err
	}
	base = -1
	switch typ {
	case plumbing.OFSDeltaObject:
		rel, err := ofsOffset(r)
		if err != nil {
			return 0, err
		}
		if base = off - rel; rel <= 0 || base < 0 {
			return 0, fmt.Errorf("delta base offset %d out of the pack", rel)
		}
	case plumbing.REFDeltaObject:
		var h plumbing.Hash
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return 0, err
		}
		if base, err = p.idx.FindOffset(h); err != nil {
			return 0, fmt.Errorf("delta base %s: %w", h, err)
		}
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	default:
		return 0, fmt.Errorf("object type %d", typ)
	}
	if size > bound {
		return 0, fmt.Errorf("%w: a stream of %d bytes, more than %d", errObjectTooLarge, size, bound)
	}
	zr, err := zlib.NewReader(r)
	if err != nil {
		return 0, err
	}
	n, err := io.CopyN(io.Discard, zr, size+1)
	switch {
	case n > size:
		return 0, fmt.Errorf("stream is longer than the %d bytes its header declares", size)
	case n < size:
		return 0, fmt.Errorf("stream ends after %d of the %d bytes its header declares: %w", n, size, err)
	}
	return base, nil
}

// packHeader reads a pack object's header: its type and declared size.
func packHeader(r io.ByteReader) (plumbing.ObjectType, int64, error) {
	c, err := r.ReadByte()
	if err != nil {
		return 0, 0, err
	}
	typ := plumbing.ObjectType(c >> 4 & 7)
	size := int64(c & 15)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if shift > 55 {
			return 0, 0, errors.New("object size does not fit 63 bits")
		}
		if c, err = r.ReadByte(); err != nil {
			return 0, 0, err
		}
		size |= int64(c&0x7f) << shift
	}
	return typ, size, nil
}

// ofsOffset reads an offset delta's distance back to its base.
func ofsOffset(r io.ByteReader) (int64, error) {
	c, err := r.ReadByte()
	if err != nil {
		return 0, err
	}
	off := int64(c & 0x7f)
	for i := 0; c&0x80 != 0; i++ {
		if i > 8 {
			return 0, errors.New("delta base offset does not fit 63 bits")
		}
		if c, err = r.ReadByte(); err != nil {
			return 0, err
		}
		off = (off+1)<<7 | int64(c&0x7f)
	}
	return off, nil
}
